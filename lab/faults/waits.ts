/** Small waiting helpers of the fault runner: a gRPC deadline around a client call, and polling. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerLink } from './lab';

/** Runs `fn` with a gRPC deadline, so a query to a run without a live worker cannot hang the runner. */
export function withDeadline<T>(link: ServerLink, ms: number, fn: () => Promise<T>): Promise<T> {
  return link.connection.withDeadline(Date.now() + ms, fn);
}

/** Polls until `probe` returns a value, the signal aborts, or `timeoutMs` passes. */
export async function until<T>(
  probe: () => Promise<T | undefined>,
  signal: AbortSignal,
  timeoutMs: number,
  everyMs = 150,
): Promise<T | undefined> {
  const end = Date.now() + timeoutMs;
  while (!signal.aborted && Date.now() < end) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    await sleep(everyMs);
  }
  return undefined;
}
