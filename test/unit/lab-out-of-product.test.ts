/**
 * The fault lab plugs in from outside: the product's workflow bundle carries no crash point, the lab's bundle does
 * (its workflow interceptor), and a worker process installs the crash points only when the lab configures it.
 */
import { buildWorkflowBundle } from '../../src/worker/bundle';
import {
  crashPointClient,
  crashPointPlugin,
  crashPointsFromEnv,
  FAULT_WORKFLOW_INTERCEPTORS_MODULE,
} from '../../lab/faults/crash-points';
import type { Downstream } from '../../src/downstream/client';

jest.setTimeout(60_000);

test('only the lab bundle carries the workflow crash point', async () => {
  const [product, lab] = await Promise.all([
    buildWorkflowBundle(),
    buildWorkflowBundle({ interceptorModules: [FAULT_WORKFLOW_INTERCEPTORS_MODULE] }),
  ]);
  expect(product.code).not.toContain('workflow.before_intent');
  expect(product.code).not.toContain('ledgerloopFaults');
  expect(lab.code).toContain('workflow.before_intent');
});

test('a worker process installs crash points only with a crash plan or LEDGERLOOP_CRASH_POINTS=1', () => {
  expect(crashPointsFromEnv({})).toBe(false);
  expect(crashPointsFromEnv({ LEDGERLOOP_CRASH_AT: '  ' })).toBe(false);
  expect(crashPointsFromEnv({ LEDGERLOOP_CRASH_POINTS: 'true' })).toBe(false);
  expect(crashPointsFromEnv({ LEDGERLOOP_CRASH_AT: 'tool.before_send:1:kill:0' })).toBe(true);
  expect(crashPointsFromEnv({ LEDGERLOOP_CRASH_POINTS: '1' })).toBe(true);
});

test('the crash-point plugin adds the fault sink and the at-dispatch activity interceptor, and the workflow interceptor only to a worker that bundles', async () => {
  const mine = () => ({});
  const bundling = await crashPointPlugin.configureWorker!({
    taskQueue: 'q',
    sinks: { other: {} } as never,
    interceptors: { activity: [mine] },
  });
  expect(Object.keys(bundling.sinks ?? {}).sort()).toEqual(['ledgerloopFaults', 'other']);
  expect(bundling.interceptors?.workflowModules).toEqual([FAULT_WORKFLOW_INTERCEPTORS_MODULE]);
  // The worker's own activity interceptors stay, first; the lab's `tool.at_dispatch` joins them.
  expect(bundling.interceptors?.activity).toHaveLength(2);
  expect(bundling.interceptors?.activity?.[0]).toBe(mine);
  const prebuilt = await crashPointPlugin.configureWorker!({ taskQueue: 'q', workflowBundle: { codePath: 'b.js' } });
  expect(Object.keys(prebuilt.sinks ?? {})).toEqual(['ledgerloopFaults']);
  expect(prebuilt.interceptors?.workflowModules).toBeUndefined();
  expect(prebuilt.interceptors?.activity).toHaveLength(1);
});

test('the crash-point client passes sends, lookups and the contract through to the client it wraps', async () => {
  const seen: string[] = [];
  const inner: Downstream = {
    send: async (path) => (seen.push(`send ${path}`), { kind: 'unavailable', reason: 'stub' }),
    lookup: async (key) => (seen.push(`lookup ${key}`), { kind: 'not_found', sealed: false }),
    contract: async () => (seen.push('contract'), { service: 'wallet', idempotencyRetentionMs: 1 }),
  };
  const client = crashPointClient('wallet', inner);
  await expect(client.send('/v1/refunds', {}, { key: 'k', intentAt: 'now' })).resolves.toMatchObject({
    kind: 'unavailable',
  });
  await expect(client.lookup('k', { tenant: 't' })).resolves.toEqual({ kind: 'not_found', sealed: false });
  await expect(client.contract()).resolves.toMatchObject({ idempotencyRetentionMs: 1 });
  expect(seen).toEqual(['send /v1/refunds', 'lookup k', 'contract']);
});
