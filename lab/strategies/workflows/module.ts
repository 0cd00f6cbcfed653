/**
 * Bundled into the lab's workflow bundles as a workflow interceptor module (it intercepts nothing): loading it
 * installs the naive loop in the bundle, so the run's input check and its call runner serve `blind_retry`. The
 * production bundle does not carry it (test/unit/lab-out-of-product.test.ts).
 */
import './naive';

export const interceptors = (): Record<string, never> => ({});
