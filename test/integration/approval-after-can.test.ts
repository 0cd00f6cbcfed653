/**
 * An approval after continue-as-new, on the dev server: the continued run still knows the identity it was started
 * under (carried with its state), so the run's own principal cannot approve its call even though it holds the
 * approver role, and another approver can.
 *
 * It ran on the time-skipping test server until the update that approves hung there now and then under load (the
 * Java test server's update support: temporalio/sdk-java#1903, temporalio/features#551); nothing here needs
 * virtual time, so it runs where the other approval tests run.
 */
import type { Stack } from '../../lab/stack';
import type { agentRun } from '../../workflows/agent-run.workflow';
import { Policy } from '../../src/domain/policy-format';
import { StaticPolicyStore } from '../../src/stores/policy-store';
import {
  decideApprovalUpdate,
  ledgerQuery,
  pendingApprovalsQuery,
  type PendingApproval,
} from '../../workflows/definitions';
import { deadlineIn, inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(120_000);

let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('approval-can');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});

const policy = Policy.parse({
  version: 'acme-can/1',
  approvalTtlMs: 60_000,
  rules: [{ action: 'wallet.debit', maxAmountMinor: 100_000, approvalOverMinor: 50_000 }],
});

test('after continue-as-new the run still knows who started it: its own principal may not approve, another may', async () => {
  const tq = taskQueue('approval-can');
  const worker = await inProcessWorker(stack, tq, undefined, { policies: new StaticPolicyStore(policy) });
  await worker.runUntil(async () => {
    const workflowId = tq;
    const handle = await stack.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: tq,
      workflowId,
      args: [
        {
          principal: { id: 'user:alice', tenant: 'acme' },
          identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
          goal: 'two debits',
          strategy: 'same_key_replay',
          planner: {
            kind: 'scripted',
            scenario: 'two-debits',
            vars: {
              account: 'acct_1',
              amount: { minor: 1_100, currency: 'EUR' },
              amount2: { minor: 60_000, currency: 'EUR' },
            },
          },
          // Small enough that the run continues as new after its first turn, before the second debit asks.
          budgets: { maxHistoryEvents: 10 },
          deadlineAt: deadlineIn(3600_000),
        },
      ],
    });
    let pending: PendingApproval | undefined;
    for (let i = 0; i < 300 && pending === undefined; i++) {
      pending = (await handle.query(pendingApprovalsQuery).catch(() => []))[0];
      if (pending === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    if (pending === undefined) throw new Error('the second debit never asked for an approval');
    const asked = pending;
    const snap = await handle.query(ledgerQuery);
    expect(snap.events[0]?.type).toBe('LedgerCarriedForward');
    const decide = async (principal: string) =>
      handle.executeUpdate(decideApprovalUpdate, {
        args: [
          {
            logicalCallId: asked.logicalCallId,
            argumentsHash: asked.argumentsHash,
            policyVersion: asked.policyVersion,
            token: await stack.identity.issueFor(
              { purpose: 'approve', run: workflowId, call: asked.logicalCallId },
              principal,
              'acme',
              ['approver'],
            ),
            decision: 'approve',
          },
        ],
      });
    // alice holds the approver role too, and started this run: refused, typed.
    await expect(decide('user:alice')).rejects.toMatchObject({ cause: { type: 'Actor.Forbidden' } });
    // The control: carol, another approver, is accepted, and the debit is dispatched once.
    await expect(decide('manager:carol')).resolves.toMatchObject({ accepted: true, approver: 'manager:carol' });
    const result = await handle.result();
    expect(result.stopReason).toBe('completed');
    const big = result.calls.at(-1)!;
    expect(big.state).toBe('SUCCEEDED');
    expect((await stack.walletClient.stats(big.operationKey!)).businessEffectCount).toBe(1);
  });
});
