/** Workers side by side, one per kind of loop, each with its own bundle and task queue. */
import type { BenchContext } from '../sections/common';
import type { WorkerTuning } from '../worker-proc';
import type { BaselineKind, Kind } from './runs';
import { startWorker, type WorkerHandle } from './worker-handle';

export interface Workers<K extends Kind> {
  tq(kind: K): string;
  readonly handles: Readonly<Record<K, WorkerHandle>>;
  stop(): Promise<void>;
}

/** A governed worker and a bare worker. */
export type WorkerPair = Workers<BaselineKind>;

/** One worker per kind in `kinds`, started together. */
export async function startWorkers<K extends Kind>(
  ctx: BenchContext,
  name: string,
  tuning: WorkerTuning,
  kinds: readonly K[],
): Promise<Workers<K>> {
  const queue = (kind: K): string => `bench-${name}-${kind}-${ctx.stamp}`;
  const started = await Promise.allSettled(
    kinds.map((kind) => startWorker(ctx.stack.workerConfig(queue(kind), tuning, kind))),
  );
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(up.map((w) => w.stop()));
    throw failed.reason;
  }
  const handles = Object.fromEntries(kinds.map((kind, i) => [kind, up[i]!])) as Record<K, WorkerHandle>;
  return {
    tq: queue,
    handles,
    stop: async () => {
      await Promise.all(up.map((w) => w.stop()));
    },
  };
}

export function startPair(ctx: BenchContext, name: string, tuning: WorkerTuning): Promise<WorkerPair> {
  return startWorkers(ctx, name, tuning, ['governed', 'bare'] as const);
}
