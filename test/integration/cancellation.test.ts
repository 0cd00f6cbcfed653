/**
 * Cancelling a run proves only that we stopped waiting. A cancelled run dispatches nothing new; a call in
 * flight at that moment becomes UNKNOWN and is reconciled against the downstream, never assumed stopped.
 */
import type { Stack } from '../../lab/stack';
import { readLedger } from '../../host/client/runs';
import { pendingApprovalsQuery } from '../../workflows/definitions';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('cancel');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_c', balanceMinor: 1_000_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});
const requests = async () => (await stack.walletClient.stats('', { prefix: true })).dispatchCount;

test('a call in flight when the run is cancelled is reconciled: its committed effect is found, not assumed gone', async () => {
  await stack.walletClient.armFault({ at: 'after_commit', do: 'delay', ms: 1_500, path: '/v1/debits', occurrence: 1 });
  const out = await runAgent(
    stack,
    'cancel-inflight',
    input({ scenario: 'endless-debits', vars: { account: 'acct_c' }, budgets: { maxTurns: 10, maxToolCalls: 10 } }),
    async (handle) => {
      for (let i = 0; i < 100; i++) {
        const snap = await readLedger(handle);
        if (Object.values(snap.projection.calls).some((c) => c.state === 'DISPATCHING')) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await handle.cancel();
    },
  );
  await stack.walletClient.clearFaults();
  expect(out.result.stopReason).toBe('operator_stopped');
  const call = out.result.calls[0]!;
  expect(out.ledger.events.find((e) => e.type === 'ToolOutcomeMarkedUnknown')).toMatchObject({
    cause: 'cancelled_while_in_flight',
  });
  expect(call.state).toBe('SUCCEEDED'); // the wallet had committed it: reconciliation found the receipt
  expect((await stack.walletClient.stats(call.operationKey!)).businessEffectCount).toBe(1);
  // Nothing new from the model after the cancellation; the one new effect is the governed compensation of the
  // standing debit (onAbort: compensate, the default), recorded as such.
  expect(out.result.calls.filter((c) => !c.logicalCallId.startsWith('cmp_'))).toHaveLength(1);
  expect(out.ledger.projection.calls[call.logicalCallId]?.compensation).toBe('OFFSET');
  expect(out.ledger.events.find((e) => e.type === 'StandingEffectsSettled')).toMatchObject({
    stopReason: 'operator_stopped',
    choice: 'compensate',
    offset: [call.logicalCallId],
  });
});

test('a run cancelled while a call waits for approval dispatches nothing', async () => {
  const before = await requests();
  const out = await runAgent(
    stack,
    'cancel-approval',
    input({ scenario: 'send-email', vars: { to: 'ada@example.com', template: 'welcome' } }),
    async (handle) => {
      for (let i = 0; i < 100; i++) {
        if ((await handle.query(pendingApprovalsQuery)).length > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await handle.cancel();
    },
  );
  expect(out.result.stopReason).toBe('operator_stopped');
  expect(out.ledger.events.some((e) => e.type === 'DispatchIntentRecorded')).toBe(false);
  expect(await requests()).toBe(before);
});

test('a turn whose every proposal is denied can stop the run with authorization_denied', async () => {
  const out = await runAgent(
    stack,
    'denied-stop',
    input({ scenario: 'over-limit-debit', vars: { account: 'acct_c' }, onDenied: 'stop' }),
  );
  expect(out.result.stopReason).toBe('authorization_denied');
});
