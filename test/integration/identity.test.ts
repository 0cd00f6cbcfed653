/**
 * Verified identities on the real server: the absurd-TTL self-approval that used to fail a workflow task.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Stack } from '../../src/demo/stack';
import { decideApprovalUpdate, pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('identity');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});

async function waitPending(handle: WorkflowHandle): Promise<PendingApproval> {
  const end = Date.now() + 30_000;
  for (;;) {
    const pending = await handle.query(pendingApprovalsQuery).catch(() => []);
    if (pending[0]) return pending[0];
    if (Date.now() > end) throw new Error('no pending approval');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function failedTasks(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
}

const vars = { account: 'acct_1', amount: { minor: 1_000, currency: 'EUR' }, amount2: { minor: 60_000, currency: 'EUR' } };

test('a self-approval with an absurd TTL is refused by the validator and never fails a workflow task', async () => {
  const out = await runAgent(stack, 'absurd-ttl', input({ scenario: 'two-debits', vars }), async (handle) => {
    const p = await waitPending(handle);
    const base = { logicalCallId: p.logicalCallId, argumentsHash: p.argumentsHash, policyVersion: p.policyVersion };
    // `ledgerloop approve <run> <call> --as user:alice --ttl 100000000d` on alice's own pending debit
    await expect(
      handle.executeUpdate(decideApprovalUpdate, { args: [{ ...base, approver: 'user:alice', decision: 'approve', ttlMs: 100_000_000 * 86_400_000 }] }),
    ).rejects.toMatchObject({ cause: expect.objectContaining({ name: 'ApplicationFailure' }) });
    expect(await failedTasks(handle)).toBe(0);
    await handle.executeUpdate(decideApprovalUpdate, { args: [{ ...base, approver: 'manager:carol', decision: 'deny', reason: 'no' }] });
  });
  expect(out.result.calls[1]!.state).toBe('FAILED');
  expect(await failedTasks(out.handle)).toBe(0);
});
