/**
 * A user's tool module, as a worker takes it: an absolute path to a module exporting `workflowTools` (a
 * `ToolRegistry`). The worker's bundler aliases the workflow code's registry to it (host/worker/bundle.ts), and
 * the activities (the signer, the model's tool schemas) read the same module here, so both sides use one set of
 * declarations.
 */
import path from 'node:path';
import { ToolRegistry, ToolRegistryError } from '../../src/tools/registry';

/** Requires `file` and returns its `workflowTools`, or throws `Tools.Invalid` naming what is wrong. */
export function loadToolsModule(file: string): ToolRegistry {
  if (!path.isAbsolute(file)) throw new ToolRegistryError(`the tools module must be an absolute path (got ${file})`);
  let loaded: unknown;
  try {
    loaded = require(file); // eslint-disable-line @typescript-eslint/no-require-imports -- a path given at run time
  } catch (err) {
    throw new ToolRegistryError(`cannot load the tools module ${file}: ${(err as Error).message}`);
  }
  const registry = (loaded as { workflowTools?: unknown } | null)?.workflowTools;
  if (!(registry instanceof ToolRegistry)) {
    throw new ToolRegistryError(
      `the tools module ${file} must export workflowTools, a ToolRegistry (from ledgerloop/tool-registry)`,
    );
  }
  // Load every declaration once now: a module that names other tools than it defines fails the worker's start,
  // not a run.
  for (const name of registry.names()) registry.get(name);
  return registry;
}
