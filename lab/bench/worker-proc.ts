/**
 * One benchmark worker, as its own process (forked by lab/bench/lib/worker-handle.ts): one benchmark bundle
 * (agentRun's, bareLoop's or peerLoop's) plus the governed activities, the bare ones and the peer's, on one task
 * queue. It reports its resident set size, sampled every 50 ms, over IPC. Started with `--cpu-prof` for the
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

export interface WorkerProcConfig {
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly bundlePath: string;
  readonly walletUrl: string;
  /** The dispatch signing key, as a private JWK (serializeSigningKey). */
  readonly capabilityKey: string;
  readonly tuning: WorkerTuning;
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
  const governed = createActivities({
    models: [labScriptedModel()],
    services: { wallet: new DownstreamClient({ baseUrl: cfg.walletUrl, timeoutMs: 5_000 }) },
    workerIdentity: `bench-worker:${process.pid}`,
    authorize: { capabilityKey },
  });
  const bare = createBareActivities({ walletUrl: cfg.walletUrl, capabilityKey });
  const peer = createPeerActivities({ walletUrl: cfg.walletUrl, capabilityKey });
  const worker = await Worker.create({
    connection,
    namespace: cfg.namespace,
    taskQueue: cfg.taskQueue,
    identity: `bench-worker:${process.pid}`,
    workflowBundle: { codePath: cfg.bundlePath },
    activities: { ...governed, ...bare, ...peer },
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
  await connection.close();
  process.disconnect?.();
}

main().catch((err: unknown) => {
  process.send?.({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  console.error(err);
  process.exitCode = 1;
  process.disconnect?.();
});
