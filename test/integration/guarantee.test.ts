/**
 * The guarantee off the happy path, on the real server with the real wallet: each case here reproduces a path on
 * which an earlier version broke "one effect per intent, and records that say so" (issue #11).
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Stack } from '../../src/demo/stack';
import { decideApprovalUpdate, pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('guarantee');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_g', balanceMinor: 10_000_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(async () => {
  await stack.walletClient.clearFaults();
});

const effectsOf = async (key: string) => (await stack.walletClient.stats(key, { prefix: true })).businessEffectCount;

async function nextPending(handle: WorkflowHandle, seen: number): Promise<PendingApproval> {
  const end = Date.now() + 30_000;
  for (;;) {
    const pending = await handle.query(pendingApprovalsQuery).catch(() => []);
    const requested = (await handle.query('ledger').catch(() => ({ events: [] })) as { events: { type: string }[] }).events.filter(
      (e) => e.type === 'ApprovalRequested',
    ).length;
    if (pending.length > 0 && requested > seen) return pending[0]!;
    if (Date.now() > end) throw new Error(`no pending approval: ${JSON.stringify(await handle.query('ledger').catch(String)).slice(0, 6000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a new decision after a possible send', () => {
  test('a denied re-approval after a lost response ends SUCCEEDED by lookup, never FAILED on the decision alone', async () => {
    // The first send commits, its response never arrives (the wallet holds it past the client timeout); the
    // Temporal retry finds the short approval lapsed, so the run must decide again, and the approver denies.
    await stack.walletClient.armFault({ at: 'after_commit', do: 'delay', ms: 6_000, path: '/v1/debits', times: 1 });
    const out = await runAgent(
      stack,
      'reauth-denied',
      input({ vars: { account: 'acct_g', amount: { minor: 60_000, currency: 'EUR' } } }),
      async (handle) => {
        const first = await nextPending(handle, 0);
        await handle.executeUpdate(decideApprovalUpdate, {
          args: [{ logicalCallId: first.logicalCallId, argumentsHash: first.argumentsHash, policyVersion: first.policyVersion, approver: 'manager:carol', decision: 'approve', ttlMs: 3_000 }],
        });
        const second = await nextPending(handle, 1);
        await handle.executeUpdate(decideApprovalUpdate, {
          args: [{ logicalCallId: second.logicalCallId, argumentsHash: second.argumentsHash, policyVersion: second.policyVersion, approver: 'manager:dave', decision: 'deny', reason: 'not again' }],
        });
      },
    );
    const call = out.result.calls[0]!;
    expect(await effectsOf(call.operationKey!)).toBe(1);
    // The wallet holds the charge, so every record must say so.
    expect(call.state).toBe('SUCCEEDED');
    expect(out.ledger.projection.calls[call.logicalCallId]?.reconciledVia).toBe('receipt_lookup');
    const types = out.ledger.events.map((e) => e.type);
    expect(types).toContain('ApprovalDenied');
    expect(types.indexOf('ToolEffectReconciled')).toBeGreaterThan(types.indexOf('ApprovalDenied'));
    expect(out.result.stopReason).toBe('completed');
  });
});
