/**
 * The fault lab plugs in from outside: the product's workflow bundle carries no crash point, the lab's bundle does
 * (its workflow interceptor), and a worker process installs the crash points only when the lab configures it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildWorkflowBundle, REPO_ROOT } from '../../host/worker/bundle';
import { LAB_STRATEGY_WORKFLOW_MODULE } from '../../lab/strategies';
import {
  crashPointClient,
  crashPointPlugin,
  crashPointsFromEnv,
  FAULT_WORKFLOW_INTERCEPTORS_MODULE,
} from '../../lab/faults/crash-points';
import type { Downstream } from '../../src/downstream/client';

jest.setTimeout(60_000);

test("only the lab's bundles carry the workflow crash point and the naive loop", async () => {
  const product = await buildWorkflowBundle();
  const faults = await buildWorkflowBundle({ interceptorModules: [FAULT_WORKFLOW_INTERCEPTORS_MODULE] });
  const naive = await buildWorkflowBundle({ interceptorModules: [LAB_STRATEGY_WORKFLOW_MODULE] });
  expect(product.code).not.toContain('workflow.before_intent');
  expect(product.code).not.toContain('ledgerloopFaults');
  expect(faults.code).toContain('workflow.before_intent');
  for (const word of ['blind_retry', 'Naive.AssumedFailed']) {
    expect(product.code).not.toContain(word);
    expect(naive.code).toContain(word);
  }
});

test('the runtime code names no lab strategy: the naive loop lives in lab/strategies/', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
    });
  const runtime = ['src', 'host', 'workflows', 'activities', 'cli'].flatMap((d) => files(path.join(REPO_ROOT, d)));
  expect(runtime.length).toBeGreaterThan(50);
  const naming = runtime.filter((f) => /blind_retry|blindRetry|AssumedFailed/.test(readFileSync(f, 'utf8')));
  expect(naming.map((f) => path.relative(REPO_ROOT, f))).toEqual([]);
  // The check can fail: the lab's own module names it.
  expect(readFileSync(path.join(REPO_ROOT, 'lab/strategies/workflows/naive.ts'), 'utf8')).toMatch(/blind_retry/);
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
