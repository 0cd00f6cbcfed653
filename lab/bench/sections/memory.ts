/**
 * Memory against the number of runs a worker has served (issue #16: "no memory that grows ... with the number of
 * runs a worker has served"). One fresh worker per kind serves batches of one-turn runs at concurrency 10; after
 * each batch, when its runs have completed (a completed run leaves the workflow cache), the worker collects its
 * main thread's garbage and reports its RSS and that thread's V8 heap (what it retains). The first batch warms the
 * worker up (its JIT, its workflow threads' heaps); RSS rarely shrinks (V8 keeps the pages it grew into), so the
 * level after the second batch is what the last is compared with: a level that holds means nothing a run leaves
 * behind accumulates.
 */
import path from 'node:path';
import { closedLoop } from './throughput';
import { account } from '../lib/stack';
import { startLoop } from '../lib/runs';
import { runJsonChild } from '../lib/child-json';
import { round, tenthMean } from '../lib/stats';
import { readRssEverySecond, startWorker } from '../lib/worker-handle';
import type { BaselineKind } from '../lib/runs';
import { DEFAULT_TUNING, type BenchContext } from './common';

export interface BatchReading {
  /** Runs the worker has served when this reading was taken. */
  readonly runsServed: number;
  readonly rssMb: number;
  /** The main thread's V8 heap after a collection (workflows run on worker threads, whose heaps Node 20 does not report). */
  readonly heapUsedMb: number;
}

export interface RunsServed {
  readonly kind: BaselineKind;
  readonly runsPerBatch: number;
  readonly concurrency: number;
  readonly failed: number;
  readonly readings: readonly BatchReading[];
}

/** The heap one cached workflow holds before its first activation (lab/bench/instance-proc.ts). */
export interface InstanceHeap {
  readonly kind: BaselineKind;
  readonly count: number;
  readonly kbPerWorkflow: number;
  readonly msPerWorkflow: number;
}

/**
 * One long governed run under its default settings: it continues as new every 2,000 events, so no single run's
 * state (or history) grows past that. On a worker warmed up by 100 short runs, which then collects its main
 * thread's garbage; RSS read every second (first and last tenth of the readings), and the main thread's heap
 * after a collection before and after. Without that first collection RSS rose about 1 MB a second through the
 * whole run in three measurements (one with glibc's malloc held to two arenas); with it, two stayed flat. Why
 * one collection makes that difference was not isolated: the workflow threads' heaps cannot be read.
 */
export interface LongRunAtDefaults {
  readonly turns: number;
  /** Runs in the chain: the first and each continue-as-new. */
  readonly runs: number;
  readonly events: number;
  readonly seconds: number;
  readonly samples: number;
  readonly firstTenthMb: number;
  readonly lastTenthMb: number;
  /** Every reading, 1 s apart (MB). */
  readonly readingsMb?: readonly number[];
  /** The main thread's heap after a collection, before the run and after it (MB). */
  readonly mainHeapMb?: { readonly before: number; readonly after: number };
}

export interface MemoryFigures {
  readonly runsServed: readonly RunsServed[];
  /** Only with --long-run (832 turns; 166 with --quick). */
  readonly longRunAtDefaults?: LongRunAtDefaults;
  /** Absent in results written before it was measured. */
  readonly perInstance?: readonly InstanceHeap[];
}

const WORKFLOW_TYPE: Record<BaselineKind, string> = { governed: 'agentRun', bare: 'bareLoop' };

async function instanceHeap(bundle: string, kind: BaselineKind, count: number): Promise<InstanceHeap> {
  const r = await runJsonChild<Omit<InstanceHeap, 'kind'>>(
    path.join(__dirname, '..', 'instance-proc.ts'),
    [bundle, WORKFLOW_TYPE[kind], String(count)],
    ['--expose-gc', '-r', 'tsx/cjs'],
    `instance-proc for the ${kind} bundle`,
  );
  return { kind, ...r };
}

export async function measureMemory(ctx: BenchContext, opts: { longRun?: boolean } = {}): Promise<MemoryFigures> {
  // Four batches: the first warms up, the second sets the level, the last two must hold it.
  const batches = 4;
  const runsPerBatch = ctx.quick ? 50 : 100;
  const concurrency = 10;
  const out: RunsServed[] = [];
  for (const kind of ['governed', 'bare'] as const) {
    const tq = `bench-mem-${kind}-${ctx.stamp}`;
    const worker = await startWorker(ctx.stack.workerConfig(tq, DEFAULT_TUNING, kind), { exposeGc: true });
    const readings: BatchReading[] = [];
    let failed = 0;
    try {
      for (let b = 0; b < batches; b++) {
        const r = await closedLoop(ctx, kind, tq, `${tq}-${b}`, concurrency, runsPerBatch);
        failed += r.failed;
        const now = await worker.rss({ gc: true });
        readings.push({
          runsServed: (b + 1) * runsPerBatch,
          rssMb: round(now.nowMb, 1),
          heapUsedMb: round(now.heapUsedMb, 1),
        });
      }
    } finally {
      await worker.stop();
    }
    const first = readings[0]!;
    const last = readings[readings.length - 1]!;
    ctx.log(
      `memory: ${kind} worker after ${first.runsServed} runs ${first.rssMb} MB (heap ${first.heapUsedMb}), ` +
        `after ${last.runsServed} ${last.rssMb} MB (heap ${last.heapUsedMb})${failed ? `, ${failed} failed` : ''}`,
    );
    out.push({ kind, runsPerBatch, concurrency, failed, readings });
  }
  // What part of a cached run is its module instances and the SDK's runtime, before the run does anything.
  const perInstance: InstanceHeap[] = [];
  for (const kind of ['governed', 'bare'] as const) {
    const h = await instanceHeap(ctx.stack.bundles[kind], kind, ctx.quick ? 100 : 200);
    ctx.log(
      `memory: a ${kind} workflow holds ${h.kbPerWorkflow} KB before its first activation (${h.msPerWorkflow} ms to create)`,
    );
    perInstance.push(h);
  }
  // About 100 s: only when asked for (`--long-run`), so that a full run stays within its time.
  const longRunAtDefaults = opts.longRun ? await longRun(ctx, ctx.quick ? 166 : 832) : undefined;
  return { runsServed: out, perInstance, ...(longRunAtDefaults ? { longRunAtDefaults } : {}) };
}

/** A governed run of `turns` turns (832: about 10k events) with the default continue-as-new point. */
async function longRun(ctx: BenchContext, turns: number): Promise<LongRunAtDefaults> {
  const tq = `bench-mem-long-${ctx.stamp}`;
  const worker = await startWorker(ctx.stack.workerConfig(tq, DEFAULT_TUNING, 'governed'), { exposeGc: true });
  // Warmed up first (as the batches above show, a fresh worker grows over its first hundred runs).
  await closedLoop(ctx, 'governed', tq, `${tq}-warm`, 10, 100);
  const heapBefore = (await worker.rss({ gc: true })).heapUsedMb;
  let heapAfter = heapBefore;
  const t0 = Date.now();
  const rss = readRssEverySecond(worker);
  const workflowId = `${tq}-run`;
  let mb: number[] = [];
  try {
    const started = await startLoop(ctx.stack.client, 'governed', tq, workflowId, {
      turns,
      account: account(7),
      deadlineInMs: 60 * 60_000,
    });
    const result = (await started.handle.result()) as { stopReason: string; detail: string };
    if (result.stopReason !== 'completed')
      throw new Error(`long run ${workflowId}: ${result.stopReason}: ${result.detail}`);
    heapAfter = (await worker.rss({ gc: true })).heapUsedMb;
  } finally {
    mb = await rss.stop();
    await worker.stop();
  }
  const seconds = (Date.now() - t0) / 1000;
  // The chain's runs from visibility, which the server updates a moment after a run closes.
  let runs = 0;
  let events = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    runs = 0;
    events = 0;
    let open = 0;
    for await (const e of ctx.stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      runs += 1;
      events += e.historyLength;
      if (e.status.name === 'RUNNING') open += 1;
    }
    if (open === 0 && runs > 0) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const figures: LongRunAtDefaults = {
    turns,
    runs,
    events,
    seconds: round(seconds, 1),
    samples: mb.length,
    firstTenthMb: tenthMean(mb, false),
    lastTenthMb: tenthMean(mb, true),
    readingsMb: mb.map((x) => round(x, 1)),
    mainHeapMb: { before: round(heapBefore, 1), after: round(heapAfter, 1) },
  };
  ctx.log(
    `memory: one governed run of ${turns} turns at its defaults: ${runs} runs (continue-as-new), ${events} events, ` +
      `RSS ${figures.firstTenthMb} → ${figures.lastTenthMb} MB (first vs last tenth of ${mb.length} readings), ` +
      `main-thread heap ${figures.mainHeapMb!.before} → ${figures.mainHeapMb!.after} MB`,
  );
  return figures;
}
