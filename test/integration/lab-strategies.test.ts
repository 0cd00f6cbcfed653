/**
 * A production worker (allowLabStrategies false) given a blind_retry run: the dispatch refuses it before sending,
 * the workflow records the call FAILED with Strategy.Forbidden, and the wallet never sees a request.
 */
import { readLedger, startAgentRun } from '../../src/client/runs';
import type { Stack } from '../../lab/stack';
import { Failure } from '../../src/domain/failures';
import { input } from '../helpers/run';
import { inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(120_000);

let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('lab-strategies');
});
afterAll(async () => {
  await stack?.stop();
});

test('a production worker refuses a blind_retry run at dispatch: FAILED with Strategy.Forbidden, nothing sent', async () => {
  const account = 'acct_prod_refuses';
  await stack.walletClient.seedAccount({ tenant: 'acme', account, balanceMinor: 100_00, currency: 'EUR' });
  const tq = taskQueue('prod-refuses');
  const worker = await inProcessWorker(stack, tq, undefined, { allowLabStrategies: false });
  const { result, ledger } = await worker.runUntil(async () => {
    // The client is told this is a lab run; the worker is not a lab worker and must still refuse.
    const workflowId = `prod-refuses-${Date.now()}`;
    const handle = await startAgentRun(stack.client, {
      workflowId,
      taskQueue: tq,
      input: input({ strategy: 'blind_retry', vars: { account, amount: { minor: 1250, currency: 'EUR' } } }),
      allowLabStrategies: true,
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    return { result: await handle.result(), ledger: await readLedger(handle) };
  });
  expect(result.calls).toHaveLength(1);
  const call = result.calls[0]!;
  expect(call).toMatchObject({ state: 'FAILED' });
  const recorded = ledger.events.filter((e) => e.type === 'ToolResultRecorded');
  expect(recorded).toEqual([expect.objectContaining({ state: 'FAILED', errorCode: Failure.StrategyForbidden })]);
  const stats = await stack.walletClient.stats(call.operationKey!, { prefix: true });
  expect(stats).toMatchObject({ dispatchCount: 0, businessEffectCount: 0 });
});
