/**
 * The fault lab plugs in from outside: the product's workflow bundle carries no crash point, the lab's bundle does
 * (its workflow interceptor), and a worker process installs the crash points only when the lab configures it.
 */
import { buildWorkflowBundle } from '../../src/worker/bundle';
import { crashPointsFromEnv, FAULT_WORKFLOW_INTERCEPTORS_MODULE } from '../../lab/faults/crash-points';

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
