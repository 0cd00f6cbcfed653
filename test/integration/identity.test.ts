/**
 * Verified identities on the real server: a run's principal comes from a verified token; approvers, operators
 * and cancellers are verified actors; no decision input can fail a workflow task.
 */
import { createHash } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { Stack } from '../../lab/stack';
import { IdentityConfigError } from '../../src/identity/config';
import {
  decideApprovalUpdate,
  pendingApprovalsQuery,
  requestCancelUpdate,
  type PendingApproval,
} from '../../workflows/definitions';
import { actorToken, input, runAgent } from '../helpers/run';
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

const typed = (type: string) => ({ cause: expect.objectContaining({ type }) });
const effects = async () => (await stack.walletClient.stats('', { prefix: true })).businessEffectCount;
const vars = {
  account: 'acct_1',
  amount: { minor: 1_000, currency: 'EUR' },
  amount2: { minor: 60_000, currency: 'EUR' },
};

test('a self-approval with an absurd TTL is refused by the validator and never fails a workflow task', async () => {
  const out = await runAgent(stack, 'absurd-ttl', input({ scenario: 'two-debits', vars }), async (handle) => {
    const p = await waitPending(handle);
    const base = { logicalCallId: p.logicalCallId, argumentsHash: p.argumentsHash, policyVersion: p.policyVersion };
    // `ledgerloop approve <run> <call> --token <alice's> --ttl 100000000d` on alice's own pending debit
    const alice = await actorToken(stack, 'user:alice', ['approver']);
    await expect(
      handle.executeUpdate(decideApprovalUpdate, {
        args: [{ ...base, token: alice, decision: 'approve', ttlMs: 100_000_000 * 86_400_000 }],
      }),
    ).rejects.toMatchObject(typed('Approval.Invalid'));
    // Within the cap, alice is still refused: a principal never approves its own call.
    await expect(
      handle.executeUpdate(decideApprovalUpdate, { args: [{ ...base, token: alice, decision: 'approve' }] }),
    ).rejects.toMatchObject(typed('Actor.Forbidden'));
    expect(await failedTasks(handle)).toBe(0);
    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        { ...base, token: await actorToken(stack, 'manager:carol', ['approver']), decision: 'deny', reason: 'no' },
      ],
    });
  });
  expect(out.result.calls[1]!.state).toBe('FAILED');
  expect(await failedTasks(out.handle)).toBe(0);
});

test('a verified run records the subject and the token digest, never the token; the approver is the verified principal', async () => {
  const token = await stack.identity.issue('user:alice', 'acme');
  let carolToken = '';
  const out = await runAgent(
    stack,
    'verified-approval',
    input({ scenario: 'two-debits', vars }),
    async (handle) => {
      const p = await waitPending(handle);
      carolToken = await actorToken(stack, 'manager:carol', ['approver']);
      await handle.executeUpdate(decideApprovalUpdate, {
        args: [
          {
            logicalCallId: p.logicalCallId,
            argumentsHash: p.argumentsHash,
            policyVersion: p.policyVersion,
            token: carolToken,
            decision: 'approve',
            ttlMs: 60_000,
          },
        ],
      });
    },
    { identityToken: token },
  );
  expect(out.result.stopReason).toBe('completed');
  const created = out.ledger.events.find((e) => e.type === 'RunCreated');
  expect(created).toMatchObject({
    identity: { verified: true, subject: 'user:alice', tokenDigest: createHash('sha256').update(token).digest('hex') },
  });
  const granted = out.ledger.events.find((e) => e.type === 'ApprovalGranted');
  expect(granted).toMatchObject({
    approver: 'manager:carol',
    actor: { principalId: 'manager:carol', subject: 'manager:carol' },
  });
  const text = JSON.stringify(out.ledger);
  expect(text).not.toContain(token);
  expect(text).not.toContain(carolToken);
});

test('a worker with no identity issuers denies every run before any model call (fail closed)', async () => {
  const before = await effects();
  const none = {
    current: () => {
      throw new IdentityConfigError('no identity issuers configured');
    },
  };
  const out = await runAgent(stack, 'no-issuers', input(), undefined, { identity: none });
  expect(out.result.stopReason).toBe('authorization_denied');
  expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({
    identity: { verified: false, code: 'Identity.Unconfigured' },
  });
  expect(out.ledger.events.some((e) => e.type === 'ModelRequestStarted')).toBe(false);
  expect(await effects()).toBe(before);
});

test('requestCancel: a stranger is refused; an operator of the tenant stops the run and is recorded', async () => {
  const out = await runAgent(stack, 'verified-cancel', input({ scenario: 'two-debits', vars }), async (handle) => {
    await waitPending(handle);
    const bob = await actorToken(stack, 'user:bob', []);
    await expect(
      handle.executeUpdate(requestCancelUpdate, { args: [{ token: bob, reason: 'because' }] }),
    ).rejects.toMatchObject(typed('Actor.Forbidden'));
    const globexOps = await actorToken(stack, 'ops:gus', ['operator'], 'globex');
    await expect(
      handle.executeUpdate(requestCancelUpdate, { args: [{ token: globexOps, reason: 'because' }] }),
    ).rejects.toMatchObject(typed('Actor.Forbidden'));
    await handle.executeUpdate(requestCancelUpdate, {
      args: [{ token: await actorToken(stack, 'ops:bob', ['operator']), reason: 'stop it' }],
    });
  });
  expect(out.result.stopReason).toBe('operator_stopped');
  expect(out.result.detail).toContain('by ops:bob');
  expect(out.ledger.events.find((e) => e.type === 'CancellationRequested')).toMatchObject({
    requestedBy: { principalId: 'ops:bob' },
    reason: 'stop it',
  });
  expect(await failedTasks(out.handle)).toBe(0);
});
