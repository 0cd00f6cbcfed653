/** A governed worker and a bare worker side by side, each with its own bundle and task queue. */
import type { BenchContext } from '../sections/common';
import type { WorkerTuning } from '../worker-proc';
import type { Kind } from './runs';
import { startWorker, type WorkerHandle } from './worker-handle';

export interface WorkerPair {
  tq(kind: Kind): string;
  readonly handles: Readonly<Record<Kind, WorkerHandle>>;
  stop(): Promise<void>;
}

export async function startPair(ctx: BenchContext, name: string, tuning: WorkerTuning): Promise<WorkerPair> {
  const queues: Record<Kind, string> = {
    governed: `bench-${name}-governed-${ctx.stamp}`,
    bare: `bench-${name}-bare-${ctx.stamp}`,
  };
  const [governed, bare] = await Promise.all([
    startWorker(ctx.stack.workerConfig(queues.governed, tuning, 'governed')),
    startWorker(ctx.stack.workerConfig(queues.bare, tuning, 'bare')),
  ]);
  return {
    tq: (kind) => queues[kind],
    handles: { governed, bare },
    stop: async () => {
      await Promise.all([governed.stop(), bare.stop()]);
    },
  };
}
