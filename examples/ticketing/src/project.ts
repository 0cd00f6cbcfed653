/** Where this project keeps its files, and the settings its commands share. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PolicyDocument } from 'ledgerloop/worker';

export const PROJECT_DIR = path.resolve(__dirname, '..');
/** Keys, the service's database and the worker's files; git-ignored. */
export const DATA_DIR = process.env['TICKETING_DATA_DIR'] ?? path.join(PROJECT_DIR, '.data');
export const KEYS_DIR = path.join(DATA_DIR, 'keys');
/** The worker's tools module: the workflow bundle carries it in place of the built-in tools. */
export const TOOLS_MODULE = require.resolve('./tools/workflow-tools');
export const TASK_QUEUE = process.env['TICKETING_TASK_QUEUE'] ?? 'ticketing';
export const DEFAULT_TICKETING_URL = 'http://127.0.0.1:4300';

/** The project's own policy (policy.json). */
export function readPolicy(file = path.join(PROJECT_DIR, 'policy.json')): PolicyDocument {
  return JSON.parse(readFileSync(file, 'utf8')) as PolicyDocument;
}
