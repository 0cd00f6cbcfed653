/** Small waiting helpers of the fault runner: a gRPC deadline around a client call, and polling. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerLink } from './lab';

/** Runs `fn` with a gRPC deadline, so a query to a run without a live worker cannot hang the runner. */
export function withDeadline<T>(link: ServerLink, ms: number, fn: () => Promise<T>): Promise<T> {
  return link.connection.withDeadline(Date.now() + ms, fn);
}

/**
 * `p`, or undefined as soon as `signal` aborts: a driver whose run has ended stops at once instead of waiting out
 * a query's deadline. (`p` itself runs on; its outcome is ignored.)
 */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) resolve(undefined);
        else reject(err);
      },
    );
  });
}

/** Sleeps `ms`, or less when `signal` aborts first. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

/** Polls until `probe` returns a value, the signal aborts (at once, mid-probe too), or `timeoutMs` passes. */
export async function until<T>(
  probe: () => Promise<T | undefined>,
  signal: AbortSignal,
  timeoutMs: number,
  everyMs = 150,
): Promise<T | undefined> {
  const end = Date.now() + timeoutMs;
  while (!signal.aborted && Date.now() < end) {
    try {
      const v = await unlessAborted(probe(), signal);
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    await pause(everyMs, signal);
  }
  return undefined;
}
