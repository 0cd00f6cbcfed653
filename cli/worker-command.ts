/**
 * `ledgerloop worker`: a worker process. With a project config (cli/project.ts) it serves the project: its tools
 * module bundled into the workflow code, its scripted scenarios or real model, its policy, services and keys, on
 * its task queue; it first registers Ledgerloop's search attributes on the server when they are missing (a server
 * started by hand lacks them). Without one it is the built-in worker, configured by the environment as before.
 * Flags win over the environment, which wins over the config.
 */
import { ensureSearchAttributes } from '../host/server/dev-server';
import { resolveConnectionConfig } from '../host/server/connection-config';
import { exitOnWorkerError, runWorkerProcess } from '../host/worker/main';
import { activeProject } from './active-project';
import { commandProject } from './project';
import { applyProjectEnvironment } from '../host/project/environment';
import { adoptLocalCodecKeys } from '../src/codec/demo-key';

export interface WorkerFlags {
  readonly config?: string;
  readonly taskQueue?: string;
  readonly address?: string;
  readonly namespace?: string;
  readonly bundle?: string;
  readonly maxCachedWorkflows?: string;
}

/** The flags as the environment variables the worker process reads. */
export function workerFlagEnv(flags: WorkerFlags): Record<string, string> {
  const out: Record<string, string> = {};
  if (flags.taskQueue !== undefined) out['LEDGERLOOP_TASK_QUEUE'] = flags.taskQueue;
  if (flags.address !== undefined) out['TEMPORAL_ADDRESS'] = flags.address;
  if (flags.namespace !== undefined) out['TEMPORAL_NAMESPACE'] = flags.namespace;
  if (flags.bundle !== undefined) out['LEDGERLOOP_WORKFLOW_BUNDLE'] = flags.bundle;
  if (flags.maxCachedWorkflows !== undefined) out['LEDGERLOOP_MAX_CACHED_WORKFLOWS'] = flags.maxCachedWorkflows;
  return out;
}

export async function runWorkerCommand(flags: WorkerFlags): Promise<void> {
  try {
    const project = await commandProject(flags);
    if (project !== undefined && project !== activeProject()) applyProjectEnvironment(project, process.env);
    Object.assign(process.env, workerFlagEnv(flags));
    // No keys configured, but the demo's here: read and write as the CLI and the demo's workers do.
    if (adoptLocalCodecKeys(process.env).kind === 'demo')
      process.stderr.write(
        `ledgerloop worker: no LEDGERLOOP_CODEC_KEYS: payloads are encrypted with the demo key in ${process.env['LEDGERLOOP_CODEC_KEYS_FILE']}, as the demo's workers and this CLI do\n`,
      );
    if (project !== undefined) {
      const { address, namespace } = resolveConnectionConfig();
      process.stderr.write(
        `ledgerloop worker: project ${project.file}: tools ${project.tools}, task queue ${process.env['LEDGERLOOP_TASK_QUEUE'] ?? 'ledgerloop'}, Temporal ${address} (${namespace})\n`,
      );
      try {
        await ensureSearchAttributes(address, namespace);
      } catch (err) {
        process.stderr.write(
          `ledgerloop worker: warning: could not check Ledgerloop's search attributes on ${address}: ${(err as Error).message}\n`,
        );
      }
    }
    await runWorkerProcess(project === undefined ? demoModels() : {});
  } catch (err) {
    exitOnWorkerError(err);
  }
}

/**
 * The built-in worker's models: with LEDGERLOOP_SCRIPTED_MODEL=1, the scripted model on the demo's scenarios
 * (lab/scenarios.ts; the demo, compose and the first-hour commands start such workers).
 */
function demoModels(): { models: ReturnType<typeof import('../lab/scenarios').scriptedModelsFromEnv> } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the lab's scenarios, only without a project
  const { scriptedModelsFromEnv } = require('../lab/scenarios') as typeof import('../lab/scenarios');
  return { models: scriptedModelsFromEnv(process.env) };
}
