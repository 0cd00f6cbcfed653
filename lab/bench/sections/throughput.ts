/**
 * Figure 2: throughput. Completed runs per second at concurrency 1, 10, 100 and 1000, each a closed loop of
 * `c` slots that start a run, await its result and start the next, until N runs completed. A run is one debit
 * turn plus the final answer (two model calls, one tool call). Every (kind, c) cell gets a FRESH worker process
 * with the same tuning, a warm-up that is not counted, then its resident set size sampled every 50 ms while the
 * cell runs. Governed, bare and the peers' cells take turns at going first, level by level (the order rotates).
 */
import type { Client } from '@temporalio/client';
import { historyBytes } from '../lib/history';
import { finish, PEER_KINDS, rotation, startLoop, type Kind, type LoopSpec, type PeerKind } from '../lib/runs';
import { account } from '../lib/stack';
import { processCpuMs } from '../lib/proc-cpu';
import { percentile, round } from '../lib/stats';
import { startWorker } from '../lib/worker-handle';
import { DEFAULT_TUNING, type BenchContext } from './common';

export interface ThroughputCell {
  readonly kind: Kind;
  readonly concurrency: number;
  /** Worker processes ("hosts") polling the cell's task queue; CPU is their sum, RSS the largest one's. */
  readonly hosts: number;
  readonly runs: number;
  readonly failed: number;
  readonly seconds: number;
  readonly runsPerSecond: number;
  /** Client-side start → result of each run. */
  readonly runLatencyMs: { readonly p50: number; readonly p95: number; readonly max: number };
  readonly rssMb: { readonly idle: number; readonly mean: number; readonly peak: number };
  /** CPU time per completed run: the worker process, the dev server, the wallet. */
  readonly cpuMsPerRun: { readonly worker: number; readonly server: number; readonly wallet: number };
  readonly workerStartupMs: number;
  /** Workflow tasks the worker's Core reported as taking over 5 s (TMPRL1104). */
  readonly slowWorkflowTasks: number;
  /** In a sample of the cell's histories: workflow tasks that timed out or failed (sticky timeouts, ...). */
  readonly sampledHistories: {
    readonly runs: number;
    readonly workflowTaskTimeouts: number;
    readonly workflowTaskFailures: number;
    readonly eventsPerRun: number;
    /** Encoded bytes of a whole history (what the server stores). Absent in older results. */
    readonly bytesPerRun?: number;
  };
}

/** Governed over one other kind at one concurrency. */
export interface GovernedOver {
  readonly runsPerSecond: number;
  readonly workerCpuPerRun: number;
  readonly rssPeak: number;
}

export interface ThroughputRatio {
  readonly concurrency: number;
  /** Governed runs/s over bare runs/s. */
  readonly governedOverBare: number;
  /** Governed worker RSS peak over bare. */
  readonly rssPeakRatio: number;
  /** Against each peer (PEER_KINDS) the pass measured. Absent in results written before the peers. */
  readonly overPeers?: Readonly<Partial<Record<PeerKind, GovernedOver>>>;
  /**
   * The governed AI SDK agent over the AI SDK peer: what adding Ledgerloop's governed tools to the same AI SDK
   * agent costs. Absent in results written before that row.
   */
  readonly aiSdkGovernedOverPeer?: GovernedOver;
}

export interface ThroughputFigures {
  readonly hosts: number;
  readonly cells: readonly ThroughputCell[];
  readonly ratios: readonly ThroughputRatio[];
  readonly tuning: typeof DEFAULT_TUNING;
}

export function throughputPlan(quick: boolean): readonly { concurrency: number; runs: number }[] {
  const levels = process.env.BENCH_LEVELS?.split(',').map(Number);
  const plan = quick
    ? [
        { concurrency: 1, runs: 10 },
        { concurrency: 10, runs: 50 },
        { concurrency: 100, runs: 200 },
      ]
    : [
        { concurrency: 1, runs: 20 },
        { concurrency: 10, runs: 100 },
        { concurrency: 100, runs: 150 },
        { concurrency: 1000, runs: 1000 },
      ];
  // BENCH_RUNS: every cell's run count (a smoke test with tiny counts), never below the concurrency.
  const runs = Number(process.env.BENCH_RUNS ?? NaN);
  const sized =
    Number.isSafeInteger(runs) && runs > 0 ? plan.map((p) => ({ ...p, runs: Math.max(runs, p.concurrency) })) : plan;
  return levels ? sized.filter((p) => levels.includes(p.concurrency)) : sized;
}

/** Runs `total` loops of one debit turn with `concurrency` slots; resolves with timings. */
export async function closedLoop(
  ctx: BenchContext,
  kind: Kind,
  taskQueue: string,
  prefix: string,
  concurrency: number,
  total: number,
  extra: Partial<LoopSpec> = {},
  /** The client the runs are started with (default the stack's, which encodes nothing). */
  client: Client = ctx.stack.client,
): Promise<{ seconds: number; failed: number; latencies: number[]; failures: string[] }> {
  let next = 0;
  let failed = 0;
  const latencies: number[] = [];
  const failures: string[] = [];
  const t0 = Date.now();
  const slot = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const begun = Date.now();
      try {
        const s = await startLoop(client, kind, taskQueue, `${prefix}-${i}`, {
          ...extra,
          turns: 1,
          account: account(i),
        });
        const done = await finish(s, 1);
        if (!done.ok) {
          failed += 1;
          failures.push(done.detail);
        }
      } catch (err) {
        failed += 1;
        failures.push((err as Error).message);
      }
      latencies.push(Date.now() - begun);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, slot));
  return { seconds: (Date.now() - t0) / 1000, failed, latencies, failures };
}

/** `hosts` worker processes on one task queue, read as one: CPU summed, RSS of the largest, figures combined. */
async function startHosts(ctx: BenchContext, tq: string, kind: Kind, hosts: number) {
  const workers = await Promise.all(
    Array.from({ length: hosts }, () => startWorker(ctx.stack.workerConfig(tq, DEFAULT_TUNING, kind))),
  );
  return {
    startupMs: Math.max(...workers.map((w) => w.startupMs)),
    resetRss: () => workers.forEach((w) => w.resetRss()),
    async rss() {
      const all = await Promise.all(workers.map((w) => w.rss()));
      return {
        nowMb: Math.max(...all.map((r) => r.nowMb)),
        meanMb: Math.max(...all.map((r) => r.meanMb)),
        peakMb: Math.max(...all.map((r) => r.peakMb)),
        cpuMs: all.reduce((sum, r) => sum + r.cpuMs, 0),
        slowWorkflowTasks: all.reduce((sum, r) => sum + r.slowWorkflowTasks, 0),
      };
    },
    stop: () => Promise.all(workers.map((w) => w.stop())),
  };
}

export async function measureThroughput(
  ctx: BenchContext,
  opts: { readonly hosts?: number } = {},
): Promise<ThroughputFigures> {
  const hosts = opts.hosts ?? 1;
  const cells: ThroughputCell[] = [];
  const plan = throughputPlan(ctx.quick);
  for (const [level, { concurrency, runs }] of plan.entries()) {
    for (const kind of rotation(level)) {
      const tq = `bench-tp-${kind}-${concurrency}-h${hosts}-${ctx.stamp}`;
      const worker = await startHosts(ctx, tq, kind, hosts);
      try {
        await closedLoop(
          ctx,
          kind,
          tq,
          `${tq}-warm`,
          Math.min(concurrency, 10),
          Math.min(Math.max(concurrency, 5), 10),
        );
        await new Promise((r) => setTimeout(r, 300));
        const idle = (await worker.rss()).nowMb;
        worker.resetRss();
        const server0 = ctx.stack.server.cpuMs();
        const wallet0 = processCpuMs(ctx.stack.wallet.pid);
        const r = await closedLoop(ctx, kind, tq, tq, concurrency, runs);
        const rss = await worker.rss();
        const done = runs - r.failed;
        const cpuMsPerRun = {
          worker: round(rss.cpuMs / done, 1),
          server: round((ctx.stack.server.cpuMs() - server0) / done, 1),
          wallet: round((processCpuMs(ctx.stack.wallet.pid) - wallet0) / done, 1),
        };
        const sampledHistories = await sampleHistories(ctx, tq, runs);
        const cell: ThroughputCell = {
          kind,
          concurrency,
          hosts,
          runs,
          failed: r.failed,
          seconds: round(r.seconds, 2),
          runsPerSecond: round((runs - r.failed) / r.seconds, 2),
          runLatencyMs: {
            p50: percentile(r.latencies, 50),
            p95: percentile(r.latencies, 95),
            max: Math.max(...r.latencies),
          },
          rssMb: { idle: round(idle, 1), mean: round(rss.meanMb, 1), peak: round(rss.peakMb, 1) },
          cpuMsPerRun,
          workerStartupMs: worker.startupMs,
          sampledHistories,
          slowWorkflowTasks: rss.slowWorkflowTasks,
        };
        cells.push(cell);
        ctx.log(
          `throughput ${kind} c=${concurrency}${hosts > 1 ? ` on ${hosts} hosts` : ''}: ${cell.runsPerSecond} runs/s (${runs} runs in ${cell.seconds} s, ${r.failed} failed), ` +
            `run p50 ${cell.runLatencyMs.p50} ms, RSS idle ${cell.rssMb.idle} / peak ${cell.rssMb.peak} MB, ` +
            `CPU/run worker ${cpuMsPerRun.worker} ms, server ${cpuMsPerRun.server} ms, wallet ${cpuMsPerRun.wallet} ms` +
            `; sampled histories: ${sampledHistories.workflowTaskTimeouts} WFT timeouts in ${sampledHistories.runs} runs` +
            (r.failures.length ? `; first failure: ${r.failures[0]}` : ''),
        );
      } finally {
        await worker.stop();
      }
    }
  }
  const ratios = plan.map(({ concurrency }): ThroughputRatio => {
    const cell = (kind: Kind): ThroughputCell => cells.find((c) => c.kind === kind && c.concurrency === concurrency)!;
    const [g, b] = [cell('governed'), cell('bare')];
    const overPeers = Object.fromEntries(
      PEER_KINDS.map((peer): [PeerKind, GovernedOver] => [peer, governedOver(g, cell(peer))]),
    ) as Record<PeerKind, GovernedOver>;
    return {
      concurrency,
      governedOverBare: round(g.runsPerSecond / b.runsPerSecond),
      rssPeakRatio: round(g.rssMb.peak / b.rssMb.peak),
      overPeers,
      aiSdkGovernedOverPeer: governedOver(cell('aisdk-governed'), cell('aisdk')),
    };
  });
  for (const r of ratios) {
    const over = {
      ...r.overPeers,
      ...(r.aiSdkGovernedOverPeer ? { 'aisdk-governed over aisdk': r.aiSdkGovernedOverPeer } : {}),
    };
    for (const [pair, o] of Object.entries(over))
      ctx.log(
        `throughput c=${r.concurrency}${hosts > 1 ? ` on ${hosts} hosts` : ''}, ${pair.includes(' over ') ? pair : `governed over ${pair}`}: runs/s ${o.runsPerSecond}x, ` +
          `worker CPU per run ${o.workerCpuPerRun}x, worker RSS peak ${o.rssPeak}x`,
      );
  }
  return { hosts, cells, ratios, tuning: DEFAULT_TUNING };
}

export function governedOver(g: ThroughputCell, other: ThroughputCell): GovernedOver {
  return {
    runsPerSecond: round(g.runsPerSecond / other.runsPerSecond),
    workerCpuPerRun: round(g.cpuMsPerRun.worker / other.cpuMsPerRun.worker),
    rssPeak: round(g.rssMb.peak / other.rssMb.peak),
  };
}

/** Reads up to 20 histories of the cell, evenly spread, and counts workflow-task timeouts and failures. */
export async function sampleHistories(
  ctx: BenchContext,
  prefix: string,
  runs: number,
): Promise<ThroughputCell['sampledHistories']> {
  const n = Math.min(20, runs);
  let timeouts = 0;
  let failures = 0;
  let events = 0;
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const i = Math.floor((k * runs) / n);
    const h = await ctx.stack.client.workflow.getHandle(`${prefix}-${i}`).fetchHistory();
    for (const e of h.events ?? []) {
      if (e.workflowTaskTimedOutEventAttributes) timeouts += 1;
      if (e.workflowTaskFailedEventAttributes) failures += 1;
    }
    events += h.events?.length ?? 0;
    bytes += historyBytes(h);
  }
  return {
    runs: n,
    workflowTaskTimeouts: timeouts,
    workflowTaskFailures: failures,
    eventsPerRun: round(events / n, 1),
    bytesPerRun: Math.round(bytes / n),
  };
}
