/** What every benchmark section gets: the stack, the mode, a logger, the default worker tuning. */
import type { BenchStack } from '../lib/stack';
import type { WorkerTuning } from '../worker-proc';

export interface BenchContext {
  readonly stack: BenchStack;
  readonly quick: boolean;
  readonly stamp: string;
  log(line: string): void;
}

/**
 * One tuning for every worker of the benchmark, governed and bare alike. The cache holds every run in flight
 * at concurrency 1000 (no evictions, no replays); slot counts sized for a 2-core box; pollers raised so 1000
 * runs in flight do not wait on a poll. The sticky schedule-to-start timeout is 60 s, not the 2 s of
 * host/worker/worker.ts: on a saturated worker, tasks of cached runs wait longer than 2 s on the sticky queue,
 * the server then hands them out with the full history and the worker replays the run from the start
 * (BENCH_STICKY_MS=2000 shows it: WFT timeouts in the sampled histories, lower throughput).
 */
export const DEFAULT_TUNING: WorkerTuning = {
  maxCachedWorkflows: 1500,
  maxConcurrentWorkflowTaskExecutions: 100,
  maxConcurrentActivityTaskExecutions: 200,
  maxConcurrentLocalActivityExecutions: 200,
  maxConcurrentWorkflowTaskPolls: 20,
  maxConcurrentActivityTaskPolls: 20,
  stickyQueueScheduleToStartTimeoutMs: Number(process.env.BENCH_STICKY_MS ?? 60_000),
};

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
