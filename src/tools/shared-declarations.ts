/**
 * Values shared by every workflow of a worker: tool declarations (src/tools/registry.ts), zod, noble's hashes,
 * the quota request schemas. Preloaded into the reusable V8 context (the bundle's `preloadModules`,
 * host/worker/bundle.ts), so this module, and this one Map, are the same for every run.
 *
 * Why: each run evaluates the modules it requires afresh, and building a service's zod schemas costs several
 * milliseconds of CPU and about half a megabyte per cached run. Declarations are pure and never mutated (the
 * registry freezes each one), so the first run that needs a service's tools builds them and every later run
 * of the worker reuses them. The SDK's own preloading cannot share them: it deep-freezes what it preloads,
 * and zod 4 memoizes lazily on its schema objects, which a frozen schema refuses.
 *
 * Outside a workflow sandbox (activities, tests) the Map is an ordinary per-process cache.
 */
/** The shared values by name. Pure and never mutated; the zod namespace is one (host/worker/workflow-zod.ts). */
export const sharedValues = new Map<string, unknown>();

/**
 * `build()` the first time a worker asks for `name`, the same value every later time (per process outside a
 * workflow). Only for pure values that no run mutates: zod schemas, hash functions. A schema built at a module's
 * top level is built again by every run; behind this, once per worker.
 */
export function sharedValue<T>(name: string, build: () => T): T {
  if (sharedValues.has(name)) return sharedValues.get(name) as T;
  const value = build();
  sharedValues.set(name, value);
  return value;
}
