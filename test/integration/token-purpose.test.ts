/**
 * Principals are identities and tokens have a purpose, at the workflow, on a real dev server: alice cannot approve
 * her own debit under any spelling of her name or with her own subject; her start token starts one run; carol's
 * approval of one run's call approves nothing else. Each refusal has its control beside it (the valid token for the
 * same act is accepted), and no refusal fails a workflow task.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Stack } from '../../lab/stack';
import type { TokenScope } from '../../src/identity/purpose';
import {
  decideApprovalUpdate,
  pendingApprovalsQuery,
  requestCancelUpdate,
  type PendingApproval,
} from '../../workflows/definitions';
import { askedModel } from '../helpers/models';
import { signRawToken } from '../helpers/raw-token';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(180_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('token-purpose');
  await stack.walletClient.seedAccount({
    tenant: 'acme',
    account: 'acct_1',
    balanceMinor: 10_000_000,
    currency: 'EUR',
  });
});
afterAll(async () => {
  await stack?.stop();
});

const vars = (minor2: number) => ({
  account: 'acct_1',
  amount: { minor: 1_000, currency: 'EUR' },
  amount2: { minor: minor2, currency: 'EUR' },
});

/** The run's first pending approval; a run that ends first fails at once, naming how it ended. */
async function waitPending(handle: WorkflowHandle): Promise<PendingApproval> {
  // A bound for a loaded 2-core CI box (the second debit's approval comes after a full model turn and a debit).
  const end = Date.now() + 90_000;
  for (;;) {
    const [p] = await handle.query(pendingApprovalsQuery).catch(() => [] as PendingApproval[]);
    if (p) return p;
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') throw new Error(`the run ended ${status.name} with no pending approval`);
    if (Date.now() > end) throw new Error('no pending approval');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function failedTasks(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
}

/** The typed failure an update was refused with, or `accepted`. */
const decide = (handle: WorkflowHandle, p: PendingApproval, token: string, decision = 'approve') =>
  handle
    .executeUpdate(decideApprovalUpdate, {
      args: [
        {
          logicalCallId: p.logicalCallId,
          argumentsHash: p.argumentsHash,
          policyVersion: p.policyVersion,
          token,
          decision: decision as 'approve',
          ...(decision === 'deny' ? { reason: 'test' } : {}),
        },
      ],
    })
    .then(
      () => 'accepted',
      (err: { cause?: { type?: string } }) => err.cause?.type ?? 'error',
    );

test("no spelling of alice's name, and no token with her issuer and subject, approves her own debit; carol's does", async () => {
  const out = await runAgent(
    stack,
    'self-approval-spelling',
    input({ scenario: 'two-debits', vars: vars(60_000) }),
    async (handle) => {
      const p = await waitPending(handle);
      const scope: TokenScope = { purpose: 'approve', run: handle.workflowId, call: p.logicalCallId };
      // Signed with the issuer's real key: what an issuer that does not normalise principals could sign for alice.
      const asAlice = (principal: string) =>
        signRawToken(stack.identity.options, {
          sub: 'user:alice',
          principal,
          tenant: 'acme',
          roles: ['approver'],
          ...scope,
        });
      const attempts: [string, string][] = [
        ['User:alice', 'Actor.Forbidden'],
        [' user:alice', 'Identity.Unmapped'],
        ['user:alice ', 'Identity.Unmapped'],
        ['user:ali\u0441e', 'Identity.Unmapped'], // a Cyrillic "с"
        ['user:al\u200bice', 'Identity.Unmapped'], // a zero-width space
        // A principal that is valid and another's: only the token's issuer and subject say it is alice.
        ['user:\u0430\u043b\u0438\u0441\u0430', 'Actor.Forbidden'],
        ['manager:carol', 'Actor.Forbidden'],
      ];
      const seen: string[] = [];
      for (const [principal] of attempts) seen.push(await decide(handle, p, await asAlice(principal)));
      expect(seen).toEqual(attempts.map(([, code]) => code));
      expect((await handle.query(pendingApprovalsQuery)).map((x) => x.logicalCallId)).toEqual([p.logicalCallId]);
      expect(await failedTasks(handle)).toBe(0);
      // Control: carol, with a token for exactly this call, approves it.
      expect(await decide(handle, p, await stack.identity.issueFor(scope, 'manager:carol', 'acme', ['approver']))).toBe(
        'accepted',
      );
    },
  );
  expect(out.result.stopReason).toBe('completed');
  expect(out.result.calls[1]).toMatchObject({ state: 'SUCCEEDED' });
  expect(out.ledger.events.find((e) => e.type === 'ApprovalGranted')).toMatchObject({ approver: 'manager:carol' });
  expect(await failedTasks(out.handle)).toBe(0);
});

test("alice's start token starts its run, and a second run after the first closed is refused before any model call", async () => {
  let first = '';
  const opened = await runAgent(stack, 'start-once', input(), undefined, {
    identityToken: async (run) =>
      (first = await stack.identity.issueFor({ purpose: 'start', run }, 'user:alice', 'acme')),
  });
  expect(opened.result.stopReason).toBe('completed'); // the control: the token starts the run it names
  const counted = askedModel();
  const replayed = await runAgent(stack, 'start-replayed', input(), undefined, {
    identityToken: first,
    models: [counted.model],
  });
  expect(replayed.result.stopReason).toBe('authorization_denied');
  const created = replayed.ledger.events.find((e) => e.type === 'RunCreated');
  expect(created).toMatchObject({ identity: { verified: false, code: 'Identity.Invalid' } });
  expect(created?.type === 'RunCreated' && !created.identity.verified ? created.identity.reason : '').toContain(
    `the token is for start on run ${opened.workflowId}, not start on run ${replayed.workflowId}`,
  );
  expect(counted.calls()).toBe(0);
  expect(replayed.ledger.events.some((e) => e.type === 'DispatchIntentRecorded')).toBe(false);
});

test("carol's approval token for one run's call does not approve another run's 700 EUR call; its own token does", async () => {
  let carolsForA = '';
  const a = await runAgent(
    stack,
    'carol-run-a',
    input({ scenario: 'two-debits', vars: vars(60_000) }),
    async (handle) => {
      const p = await waitPending(handle);
      carolsForA = await stack.identity.issueFor(
        { purpose: 'approve', run: handle.workflowId, call: p.logicalCallId },
        'manager:carol',
        'acme',
        ['approver'],
      );
      expect(await decide(handle, p, carolsForA)).toBe('accepted');
    },
  );
  expect(a.result.stopReason).toBe('completed');
  const b = await runAgent(
    stack,
    'carol-run-b',
    input({ scenario: 'two-debits', vars: vars(70_000) }),
    async (handle) => {
      const p = await waitPending(handle);
      expect(await decide(handle, p, carolsForA)).toBe('Identity.Invalid');
      // A cancel of run B with a token for run A's cancel is refused too; a session token acts on nothing.
      const cancelA = await stack.identity.issueFor({ purpose: 'cancel', run: a.workflowId }, 'user:alice', 'acme');
      await expect(
        handle.executeUpdate(requestCancelUpdate, { args: [{ token: cancelA, reason: 'replayed' }] }),
      ).rejects.toMatchObject({ cause: expect.objectContaining({ type: 'Identity.Invalid' }) });
      expect(await decide(handle, p, await stack.identity.issue('manager:carol', 'acme', ['approver']))).toBe(
        'Identity.Invalid',
      );
      expect((await handle.query(pendingApprovalsQuery)).map((x) => x.logicalCallId)).toEqual([p.logicalCallId]);
      // Control: carol's token for run B's call approves it.
      const own = await stack.identity.issueFor(
        { purpose: 'approve', run: handle.workflowId, call: p.logicalCallId },
        'manager:carol',
        'acme',
        ['approver'],
      );
      expect(await decide(handle, p, own)).toBe('accepted');
    },
  );
  expect(b.result.stopReason).toBe('completed');
  expect(b.result.calls[1]).toMatchObject({ state: 'SUCCEEDED' });
  expect(await failedTasks(b.handle)).toBe(0);
});
