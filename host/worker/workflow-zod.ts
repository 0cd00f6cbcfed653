/**
 * What `zod` is inside the workflow bundle (the bundler aliases the package here: host/worker/bundle.ts).
 *
 * Every workflow run evaluates the bundle's modules afresh (the SDK's per-run module cache under reused V8
 * contexts), and zod is about ten thousand lines that define several hundred classes when evaluated: the largest
 * per-run cost of loading our workflow code, which a bare loop does not pay. The first run of a worker loads zod
 * and leaves its namespace in the preloaded shared map; every later run of that worker takes it from there and
 * never evaluates zod again. Nothing is frozen: the SDK deep-freezes what it preloads, and zod memoizes lazily on
 * its module objects, so zod itself cannot be preloaded.
 *
 * Deterministic: zod holds no workflow state, and its schemas are pure (the tool declarations share them already).
 * Outside the bundle (activities, tests) `zod` is the package itself and this module is not used.
 */
import type { z as Zod } from 'zod';
import { sharedValue } from '../../src/tools/shared-declarations';

// The package's own entry, which the bundler's `zod$` alias does not match: loaded by the first run only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const z = sharedValue('zod', () => (require('zod/v4') as { z: typeof Zod }).z);
