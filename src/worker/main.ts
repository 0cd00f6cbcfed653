/**
 * A worker process. Configuration from the environment:
 *   the Temporal connection through @temporalio/envconfig (TEMPORAL_ADDRESS, default 127.0.0.1:7233; TEMPORAL_NAMESPACE;
 *   TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE; TEMPORAL_API_KEY; TEMPORAL_TLS_*: src/server/connection-config.ts), LEDGERLOOP_TASK_QUEUE,
 *   LEDGERLOOP_SERVICES (JSON `{ "wallet": "http://..." }`) or LEDGERLOOP_WALLET_URL,
 *   LEDGERLOOP_WORKFLOW_BUNDLE (a prebuilt bundle file), LEDGERLOOP_PLANNER_LOG, LEDGERLOOP_MAX_CACHED_WORKFLOWS,
 *   LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES, LEDGERLOOP_STICKY_TIMEOUT_MS (default 10000),
 *   LEDGERLOOP_CODEC_KEYS / LEDGERLOOP_CODEC_KEY_ID (payload encryption), LEDGERLOOP_TRACING (console | otlp),
 *   LEDGERLOOP_ALLOW_LAB_STRATEGIES=1 (serve blind_retry runs: the demo and the fault lab only; unset, they are refused),
 *   LEDGERLOOP_SCRIPTED_MODEL=1 (plan `planner.kind: 'scripted'` runs with the scripted model; unset, they stop with
 *   model_failed), OPENAI_API_KEY / OPENAI_BASE_URL (src/planner/openai-env.ts).
 * Prints one JSON line `{"worker":..., "pid":...}` once it polls, and shuts down cleanly on SIGTERM/SIGINT.
 */
import { Runtime } from '@temporalio/worker';
import { shutdownTracingFromEnv } from '../observability/tracing';
import {
  createLedgerloopWorker,
  DEFAULT_TASK_QUEUE,
  labStrategiesFromEnv,
  type LedgerloopWorkerOptions,
} from './worker';

function services(): Record<string, string> {
  if (process.env.LEDGERLOOP_SERVICES) return JSON.parse(process.env.LEDGERLOOP_SERVICES) as Record<string, string>;
  if (process.env.LEDGERLOOP_WALLET_URL) return { wallet: process.env.LEDGERLOOP_WALLET_URL };
  throw new Error('set LEDGERLOOP_SERVICES or LEDGERLOOP_WALLET_URL');
}

/** Runs a worker process; `extra` is what an entry outside the runtime adds (lab/worker-main.ts: crash points). */
export async function runWorkerProcess(extra: Partial<LedgerloopWorkerOptions> = {}): Promise<void> {
  Runtime.install({
    logger: {
      log() {},
      trace() {},
      debug() {},
      info() {},
      warn: (m) => console.error(`[worker] ${m}`),
      error: (m) => console.error(`[worker] ${m}`),
    },
  });
  const cached = process.env.LEDGERLOOP_MAX_CACHED_WORKFLOWS;
  const { worker, identity } = await createLedgerloopWorker({
    ...extra,
    taskQueue: process.env.LEDGERLOOP_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    services: services(),
    allowLabStrategies: labStrategiesFromEnv(process.env),
    ...(process.env.LEDGERLOOP_WORKFLOW_BUNDLE ? { workflowBundlePath: process.env.LEDGERLOOP_WORKFLOW_BUNDLE } : {}),
    ...(process.env.LEDGERLOOP_PLANNER_LOG ? { plannerLogFile: process.env.LEDGERLOOP_PLANNER_LOG } : {}),
    ...(cached !== undefined ? { maxCachedWorkflows: Number(cached) } : {}),
    ...(process.env.LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES
      ? { maxConcurrentActivities: Number(process.env.LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES) }
      : {}),
    ...(process.env.LEDGERLOOP_STICKY_TIMEOUT_MS
      ? { stickyTimeoutMs: Number(process.env.LEDGERLOOP_STICKY_TIMEOUT_MS) }
      : {}),
  });
  const run = worker.run();
  process.stdout.write(`${JSON.stringify({ worker: identity, pid: process.pid })}\n`);
  try {
    await run;
  } finally {
    await shutdownTracingFromEnv();
  }
}

if (require.main === module) {
  runWorkerProcess().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
