/**
 * One benchmark worker, as its own process (forked by lab/bench/lib/worker-handle.ts): one benchmark bundle
 * (agentRun's, bareLoop's, peerLoop's or aiSdkLoop's) plus the governed activities, the bare ones and the peers', on
 * one task queue. It reports its resident set size, sampled every 50 ms, over IPC. Started with `--cpu-prof` for the
 * profile of the governed path.
 */
import { createActivities } from '../../activities';
import { Runtime, Worker } from '@temporalio/worker';
import { connectNative } from '../../host/server/connection-config';
import { DownstreamClient } from '../../src/downstream/client';
import { DISCARD_WORKFLOW_SPANS } from '../../src/observability/tracing';
import { parseSigningKey } from '../../src/capability/capability-keys';
import { createBareActivities } from './bare.activities';
import { createPeerActivities } from './peer.activities';
import { labScriptedModel } from '../../lab/scenarios';
import { runtimeLogger } from '../../src/observability/logger';
import { ledgerloopDataConverter } from '../../src/codec/data-converter';
import { workerDataConverter } from '../../src/codec/message-guard';
import { Policy } from '../../src/domain/policy-format';
import { StaticPolicyStore } from '../../src/stores/policy-store';
import { QuotaStore } from '../../src/stores/quota-store';
import { SqliteQuotaBackend } from '../../src/stores/quota-store-sqlite';
import { PostgresQuotaBackend } from '../../src/stores/quota-store-pg';

export interface WorkerProcConfig {
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly bundlePath: string;
  readonly walletUrl: string;
  /** The dispatch signing key, as a private JWK (serializeSigningKey). */
  readonly capabilityKey: string;
  readonly tuning: WorkerTuning;
  /**
   * The data converter, as the runtime's plugin builds it: the message guard, over the AES-GCM codec when `keys`
   * are given. Absent: the SDK's default converter (what the sections other than the attribution run).
   */
  readonly converter?: { readonly keys?: string };
  /** The policy document the worker holds runs to; default the built-in policy. */
  readonly policy?: unknown;
  /** The cross-run rate-limit windows: a SQLite file (one host) or a PostgreSQL URL (the cluster); default none. */
  readonly quota?: { readonly sqliteFile: string } | { readonly postgresUrl: string };
  /** Register `AiSdkPlugin` with the scripted AI SDK model (the AI SDK peer's worker). */
  readonly aiSdk?: true;
}

export interface WorkerTuning {
  readonly maxCachedWorkflows: number;
  readonly maxConcurrentWorkflowTaskExecutions: number;
  readonly maxConcurrentActivityTaskExecutions: number;
  readonly maxConcurrentLocalActivityExecutions: number;
  readonly maxConcurrentWorkflowTaskPolls: number;
  readonly maxConcurrentActivityTaskPolls: number;
  /** How long a task for a cached run may wait on the sticky queue before the server hands it to any worker. */
  readonly stickyQueueScheduleToStartTimeoutMs: number;
}

export type ToWorker =
  | { readonly type: 'rss-reset' }
  /** `gc`: collect garbage first (a worker started with `exposeGc`), so the heap figure is what is retained. */
  | { readonly type: 'rss'; readonly gc?: boolean }
  | { readonly type: 'stop' };
export interface RssReport {
  readonly type: 'rss';
  readonly nowMb: number;
  readonly peakMb: number;
  readonly meanMb: number;
  readonly samples: number;
  /** The main thread's V8 heap in use now (workflow threads have their own heaps). */
  readonly heapUsedMb: number;
  /** CPU time of this process (all threads), user + system, since the last reset. */
  readonly cpuMs: number;
  /** The monotonic clock in microseconds: the clock of --cpu-prof sample times. */
  readonly monoUs: number;
  /** Workflow tasks Core reported as taking over 5 s (TMPRL1104), and all Core warnings, since start. */
  readonly slowWorkflowTasks: number;
  readonly coreWarnings: number;
  /** The first Core warning about a failure (a failing workflow task, ...), to explain a stuck run. */
  readonly firstTaskFailure?: string;
}
export type FromWorker =
  { readonly type: 'ready'; readonly rssMb: number } | RssReport | { readonly type: 'error'; readonly message: string };

const MB = 1024 * 1024;

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.BENCH_WORKER_CONFIG ?? '') as WorkerProcConfig;
  // Core's warnings come here instead of stderr: counted (slow workflow tasks), not printed.
  let slowWorkflowTasks = 0;
  let coreWarnings = 0;
  let firstTaskFailure: string | undefined;
  Runtime.install({
    logger: runtimeLogger({
      component: 'bench-worker',
      level: 'WARN',
      format: 'text',
      write: (line, { level, message }) => {
        if (level === 'ERROR') return void process.stderr.write(`${line}\n`);
        coreWarnings += 1;
        if (message.includes('TMPRL1104')) slowWorkflowTasks += 1;
        if (firstTaskFailure === undefined && /fail/i.test(message)) firstTaskFailure = message.slice(0, 500);
      },
    }),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
  const capabilityKey = parseSigningKey(cfg.capabilityKey);
  const { connection } = await connectNative({ address: cfg.address });
  const quota = cfg.quota
    ? new QuotaStore(
        'sqliteFile' in cfg.quota
          ? new SqliteQuotaBackend(cfg.quota.sqliteFile)
          : new PostgresQuotaBackend(cfg.quota.postgresUrl),
      )
    : undefined;
  const governed = createActivities({
    models: [labScriptedModel()],
    services: { wallet: new DownstreamClient({ baseUrl: cfg.walletUrl, timeoutMs: 5_000 }) },
    workerIdentity: `bench-worker:${process.pid}`,
    authorize: {
      capabilityKey,
      ...(cfg.policy !== undefined ? { policies: new StaticPolicyStore(Policy.parse(cfg.policy)) } : {}),
    },
    ...(quota ? { quota: { store: quota } } : {}),
  });
  const bare = createBareActivities({ walletUrl: cfg.walletUrl, capabilityKey });
  const peer = createPeerActivities({ walletUrl: cfg.walletUrl, capabilityKey });
  // Loaded only for the AI SDK peer's worker: `ai` is a large ES module the other kinds never need.
  const aiSdk = cfg.aiSdk ? aiSdkWorkerParts({ walletUrl: cfg.walletUrl, capabilityKey }) : undefined;
  const converter = cfg.converter
    ? {
        dataConverter: workerDataConverter(
          cfg.converter.keys ? ledgerloopDataConverter(cfg.converter.keys) : undefined,
        ),
      }
    : {};
  const worker = await Worker.create({
    connection,
    namespace: cfg.namespace,
    taskQueue: cfg.taskQueue,
    identity: `bench-worker:${process.pid}`,
    workflowBundle: { codePath: cfg.bundlePath },
    activities: { ...governed, ...bare, ...peer, ...aiSdk?.activities },
    ...(aiSdk ? { plugins: [aiSdk.plugin] } : {}),
    ...converter,
    sinks: DISCARD_WORKFLOW_SPANS,
    maxCachedWorkflows: cfg.tuning.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: cfg.tuning.maxConcurrentWorkflowTaskExecutions,
    maxConcurrentActivityTaskExecutions: cfg.tuning.maxConcurrentActivityTaskExecutions,
    maxConcurrentLocalActivityExecutions: cfg.tuning.maxConcurrentLocalActivityExecutions,
    maxConcurrentWorkflowTaskPolls: cfg.tuning.maxConcurrentWorkflowTaskPolls,
    maxConcurrentActivityTaskPolls: cfg.tuning.maxConcurrentActivityTaskPolls,
    stickyQueueScheduleToStartTimeout: cfg.tuning.stickyQueueScheduleToStartTimeoutMs,
  });

  let peak = 0;
  let sum = 0;
  let n = 0;
  let cpuAtReset = process.cpuUsage();
  const sample = (): number => {
    const rss = process.memoryUsage().rss;
    peak = Math.max(peak, rss);
    sum += rss;
    n += 1;
    return rss;
  };
  const timer = setInterval(sample, 50);
  const send = (m: FromWorker): void => {
    process.send?.(m);
  };
  process.on('message', (m: ToWorker) => {
    if (m.type === 'rss-reset') {
      peak = 0;
      sum = 0;
      n = 0;
      cpuAtReset = process.cpuUsage();
      sample();
    } else if (m.type === 'rss') {
      if (m.gc) (globalThis as { gc?: () => void }).gc?.();
      const now = sample();
      const cpu = process.cpuUsage(cpuAtReset);
      send({
        type: 'rss',
        nowMb: now / MB,
        peakMb: peak / MB,
        meanMb: sum / n / MB,
        samples: n,
        heapUsedMb: process.memoryUsage().heapUsed / MB,
        cpuMs: (cpu.user + cpu.system) / 1000,
        monoUs: Number(process.hrtime.bigint() / 1000n),
        slowWorkflowTasks,
        coreWarnings,
        ...(firstTaskFailure !== undefined ? { firstTaskFailure } : {}),
      });
    } else if (m.type === 'stop') {
      worker.shutdown();
    }
  });
  // The benchmark process went away (killed, crashed): stop polling and exit rather than linger.
  process.once('disconnect', () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  });
  const running = worker.run();
  await new Promise((r) => setTimeout(r, 0));
  send({ type: 'ready', rssMb: sample() / MB });
  await running;
  clearInterval(timer);
  await quota?.close();
  await connection.close();
  process.disconnect?.();
}

/** The AI SDK peer's plugin (its model activity over the scripted model) and its tool activity. */
function aiSdkWorkerParts(deps: { walletUrl: string; capabilityKey: ReturnType<typeof parseSigningKey> }) {
  /* eslint-disable @typescript-eslint/no-require-imports -- a require() in a function is what defers the modules */
  const { AiSdkPlugin } = require('@temporalio/ai-sdk') as typeof import('@temporalio/ai-sdk');
  const { createAiSdkActivities, scriptedAiSdkProvider } =
    require('./aisdk.activities') as typeof import('./aisdk.activities');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return {
    plugin: new AiSdkPlugin({ modelProvider: scriptedAiSdkProvider() }),
    activities: createAiSdkActivities(deps),
  };
}

main().catch((err: unknown) => {
  process.send?.({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  console.error(err);
  process.exitCode = 1;
  process.disconnect?.();
});
