/**
 * Bundles the workflow code once (Temporal's webpack, about 1.5 s) and writes it to a file every worker process
 * can load, so starting a worker costs no bundling.
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const WORKFLOWS_PATH = path.join(REPO_ROOT, 'workflows', 'index.ts');

export async function buildWorkflowBundle(opts: { workflowsPath?: string } = {}): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
}

/** Bundle the workflows into `file` (default `.data/workflow-bundle.js`) and return its path. */
export async function writeWorkflowBundle(file = path.join(REPO_ROOT, '.data', 'workflow-bundle.js'), opts: { workflowsPath?: string } = {}): Promise<string> {
  const { code } = await buildWorkflowBundle(opts);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, code);
  if (!existsSync(file)) throw new Error(`could not write the workflow bundle to ${file}`);
  return file;
}
