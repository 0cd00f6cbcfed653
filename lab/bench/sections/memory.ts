/**
 * Memory against the number of runs a worker has served (issue #16: "no memory that grows ... with the number of
 * runs a worker has served"). One fresh worker per kind serves batches of one-turn runs at concurrency 10; after
 * each batch, when its runs have completed (a completed run leaves the workflow cache), the worker collects its
 * main thread's garbage and reports its RSS and that thread's V8 heap (what it retains). The first batch warms the
 * worker up (its JIT, its workflow threads' heaps); RSS rarely shrinks (V8 keeps the pages it grew into), so the
 * level after the second batch is what the last is compared with: a level that holds means nothing a run leaves
 * behind accumulates.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { closedLoop } from './throughput';
import { round } from '../lib/stats';
import { startWorker } from '../lib/worker-handle';
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

export interface MemoryFigures {
  readonly runsServed: readonly RunsServed[];
  /** Absent in results written before it was measured. */
  readonly perInstance?: readonly InstanceHeap[];
}

const WORKFLOW_TYPE: Record<BaselineKind, string> = { governed: 'agentRun', bare: 'bareLoop' };

function instanceHeap(bundle: string, kind: BaselineKind, count: number): Promise<InstanceHeap> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, '..', 'instance-proc.ts'), [bundle, WORKFLOW_TYPE[kind], String(count)], {
      execArgv: ['--expose-gc', '-r', 'tsx/cjs'],
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`instance-proc exited ${code} for the ${kind} bundle`));
      const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Omit<InstanceHeap, 'kind'>;
      resolve({ kind, ...r });
    });
  });
}

export async function measureMemory(ctx: BenchContext): Promise<MemoryFigures> {
  const batches = ctx.quick ? 4 : 6;
  const runsPerBatch = ctx.quick ? 50 : 100;
  const concurrency = 10;
  const out: RunsServed[] = [];
  for (const kind of ['governed', 'bare'] as const) {
    const tq = `bench-mem-${kind}-${ctx.stamp}`;
    const worker = await startWorker(ctx.stack.workerConfig(tq, DEFAULT_TUNING, kind));
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
  return { runsServed: out, perInstance };
}
