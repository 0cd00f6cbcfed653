/** Where this project keeps its files, and the settings its commands share. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { McpStdioServer } from 'ledgerloop/mcp';
import type { PolicyDocument } from 'ledgerloop/worker';

export const PROJECT_DIR = path.resolve(__dirname, '..');
/** The worker's tools module: the workflow bundle carries it in place of the built-in tools. */
export const TOOLS_MODULE = require.resolve('./tools');
export const TASK_QUEUE = process.env['MCP_FILES_TASK_QUEUE'] ?? 'mcp-files';

/**
 * The `files` server: `@modelcontextprotocol/server-filesystem` from this project's node_modules (a dependency,
 * so nothing is downloaded when the worker starts it), allowed to touch `dir` only.
 */
export function filesServer(dir: string): McpStdioServer {
  const main = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
  return { command: process.execPath, args: [main, dir] };
}

/** The project's own policy (policy.json). */
export function readPolicy(file = path.join(PROJECT_DIR, 'policy.json')): PolicyDocument {
  return JSON.parse(readFileSync(file, 'utf8')) as PolicyDocument;
}
