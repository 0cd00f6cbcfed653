/**
 * A worker process. Configuration from the environment:
 *   the Temporal connection through @temporalio/envconfig (TEMPORAL_ADDRESS, default 127.0.0.1:7233; TEMPORAL_NAMESPACE;
 *   TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE; TEMPORAL_API_KEY; TEMPORAL_TLS_*: host/server/connection-config.ts), LEDGERLOOP_TASK_QUEUE,
 *   LEDGERLOOP_SERVICES (JSON `{ "wallet": "http://..." }`) or LEDGERLOOP_WALLET_URL,
 *   LEDGERLOOP_PROJECT_CONFIG (a project config: its tools, model, policy and keys; host/project/),
 *   LEDGERLOOP_WORKFLOW_BUNDLE (a prebuilt bundle file), LEDGERLOOP_PLANNER_LOG, LEDGERLOOP_MAX_CACHED_WORKFLOWS,
 *   LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES, LEDGERLOOP_STICKY_TIMEOUT_MS (default 10000),
 *   LEDGERLOOP_CODEC_KEYS / LEDGERLOOP_CODEC_KEY_ID (payload encryption), LEDGERLOOP_TRACING (console | otlp),
 *   LEDGERLOOP_SCRIPTED_MODEL=1 (read by the entries that add the lab's scripted model: `ledgerloop worker` and
 *   lab/worker-main.ts; unset, scripted runs stop with model_failed), OPENAI_API_KEY / OPENAI_BASE_URL (src/planner/openai-env.ts).
 * Prints one JSON line `{"worker":..., "pid":...}` once it polls, and shuts down cleanly on SIGTERM/SIGINT.
 */
import { Runtime } from '@temporalio/worker';
import { ConfigError, configValue, readConfig, type Config } from '../../src/config';
import { runtimeLogger } from '../../src/observability/logger';
import { shutdownTracingFromEnv } from '../../src/observability/tracing';
import { createLedgerloopWorker, DEFAULT_TASK_QUEUE, type LedgerloopWorkerOptions } from './worker';
import type { ProjectWorkerHooks } from '../project/worker-options';

function services(config: Config): Record<string, string> {
  if (config.LEDGERLOOP_SERVICES) return config.LEDGERLOOP_SERVICES;
  if (config.LEDGERLOOP_WALLET_URL) return { wallet: config.LEDGERLOOP_WALLET_URL };
  throw new ConfigError([{ variable: 'LEDGERLOOP_SERVICES', expected: 'set (or LEDGERLOOP_WALLET_URL)' }], {});
}

/** The worker's options from its validated configuration (throws ConfigError naming each wrong variable). */
export function workerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LedgerloopWorkerOptions {
  const config = readConfig(env);
  const optional = <K extends keyof LedgerloopWorkerOptions>(key: K, value: LedgerloopWorkerOptions[K] | undefined) =>
    value === undefined ? {} : { [key]: value };
  return {
    taskQueue: config.LEDGERLOOP_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    services: services(config),
    ...optional('workflowBundlePath', config.LEDGERLOOP_WORKFLOW_BUNDLE),
    ...optional('plannerLogFile', config.LEDGERLOOP_PLANNER_LOG),
    ...optional('maxCachedWorkflows', config.LEDGERLOOP_MAX_CACHED_WORKFLOWS),
    ...optional('maxConcurrentActivities', config.LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES),
    ...optional('stickyTimeoutMs', config.LEDGERLOOP_STICKY_TIMEOUT_MS),
    ...optional('deployment', deploymentOf(config)),
  };
}

/** The Worker Deployment version this worker serves: both variables, or neither (an unversioned worker). */
function deploymentOf(config: Config): LedgerloopWorkerOptions['deployment'] {
  const name = config.LEDGERLOOP_DEPLOYMENT;
  const buildId = config.LEDGERLOOP_BUILD_ID;
  if (name === undefined && buildId === undefined) return undefined;
  if (name === undefined || buildId === undefined) {
    const missing = name === undefined ? 'LEDGERLOOP_DEPLOYMENT' : 'LEDGERLOOP_BUILD_ID';
    throw new ConfigError(
      [{ variable: missing, expected: 'set with LEDGERLOOP_DEPLOYMENT and LEDGERLOOP_BUILD_ID together' }],
      {},
    );
  }
  return { name, buildId };
}

/**
 * What the project config named by LEDGERLOOP_PROJECT_CONFIG adds (its environment first, then its tools, models
 * and inline policy: host/project/), or nothing without one.
 */
async function projectOptions(
  env: NodeJS.ProcessEnv,
  hooks: ProjectWorkerHooks,
): Promise<Partial<LedgerloopWorkerOptions> & { readonly mcp?: { close(): Promise<void> } }> {
  const file = configValue('LEDGERLOOP_PROJECT_CONFIG', env);
  if (file === undefined) return {};
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only for a project's worker */
  const { readProjectConfig } = require('../project/config') as typeof import('../project/config');
  const { applyProjectEnvironment } = require('../project/environment') as typeof import('../project/environment');
  const { projectWorkerOptions } = require('../project/worker-options') as typeof import('../project/worker-options');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const config = await readProjectConfig(file);
  applyProjectEnvironment(config, env);
  return projectWorkerOptions(config, env, hooks);
}

/**
 * Runs a worker process; `extra` is what an entry outside the runtime adds (lab/worker-main.ts: crash points), and
 * `hooks` what it changes in a project's worker (its MCP servers). The project's MCP servers close on shutdown.
 */
export async function runWorkerProcess(
  extra: Partial<LedgerloopWorkerOptions> = {},
  hooks: ProjectWorkerHooks = {},
): Promise<void> {
  const project = await projectOptions(process.env, hooks);
  const options = { ...project, ...workerOptionsFromEnv() };
  Runtime.install({ logger: runtimeLogger({ component: 'worker' }) });
  const { worker, identity } = await createLedgerloopWorker({ ...extra, ...options });
  const run = worker.run();
  process.stdout.write(`${JSON.stringify({ worker: identity, pid: process.pid })}\n`);
  try {
    await run;
  } finally {
    await project.mcp?.close();
    await shutdownTracingFromEnv();
  }
}

/** How a worker entry ends on an error: a wrong configuration is one line and exit 2; anything else, its stack. */
export function exitOnWorkerError(err: unknown): never {
  if (err instanceof ConfigError || (err instanceof Error && err.name === 'ProjectConfigError')) {
    process.stderr.write(`ledgerloop worker: ${err.message}\n`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
}

if (require.main === module) {
  runWorkerProcess().catch(exitOnWorkerError);
}
