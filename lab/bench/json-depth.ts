/**
 * At what nesting depth each walk over JSON throws `RangeError` on this Node, on the main thread (where activities
 * run) and in a worker thread (where the SDK runs workflow code, in a vm context), by bisection. Prints what it
 * measured; the figures justify `MAX_JSON_DEPTH` (src/domain/json-depth.ts). Run:
 * `node -r tsx/cjs lab/bench/json-depth.ts`.
 */
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import canonicalize from 'canonicalize';
import { z } from 'zod';

const text = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
const value = (d: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < d; i++) v = [v];
  return v;
};
const Nest: z.ZodType = z.lazy(() => z.array(Nest));

const walks: Record<string, (d: number) => unknown> = {
  'JSON.parse': (d) => JSON.parse(text(d)),
  'JSON.stringify': (d) => JSON.stringify(value(d)),
  canonicalize: (d) => canonicalize(value(d)),
  'zod (recursive schema)': (d) => Nest.safeParse(value(d)),
};

/** The largest depth (up to `cap`) at which `walk` returns. */
function deepestThatWorks(walk: (d: number) => unknown, cap = 1_000_000): number {
  let lo = 1;
  let hi = cap;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      walk(mid);
      lo = mid;
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      hi = mid - 1;
    }
  }
  return lo;
}

function measure(): Record<string, number> {
  return Object.fromEntries(Object.entries(walks).map(([name, walk]) => [name, deepestThatWorks(walk)]));
}

if (isMainThread) {
  const main = measure();
  const worker = new Worker(__filename, { execArgv: ['-r', 'tsx/cjs'] });
  worker.once('message', (inWorker: Record<string, number>) => {
    console.log(`deepest nesting that works (cap 1,000,000), Node ${process.version}`);
    for (const name of Object.keys(walks))
      console.log(
        `  ${name.padEnd(24)} main thread ${String(main[name]).padStart(9)}   worker thread ${String(inWorker[name]).padStart(9)}`,
      );
    void worker.terminate();
  });
} else {
  parentPort!.postMessage(measure());
}
