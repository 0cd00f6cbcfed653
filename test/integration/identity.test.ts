/**
 * Verified identities on the real server: a run's principal comes from a verified token; approvers, operators
 * and cancellers are verified actors; no decision input can fail a workflow task.
 */
import { createHash } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Stack } from '../../lab/stack';
import { IdentityConfigError } from '../../src/identity/config';
import {
  decideApprovalUpdate,
  pendingApprovalsQuery,
  requestCancelUpdate,
  type PendingApproval,
} from '../../workflows/definitions';
import type { Activities } from '../../activities';
import { askedModel } from '../helpers/models';
import { actorToken, input, runAgent, type RunOutcome, type StartToken } from '../helpers/run';
import { waitFor } from '../helpers/services';
import { deadlineIn, startTestStack } from '../helpers/stack';

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

/** The activity types a run scheduled, in order. */
async function scheduled(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) =>
    e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
      ? [e.activityTaskScheduledEventAttributes?.activityType?.name ?? '']
      : [],
  );
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
    const scope = { purpose: 'approve', run: handle.workflowId, call: p.logicalCallId } as const;
    // `ledgerloop approve <run> <call> --token <alice's> --ttl 100000000d` on alice's own pending debit
    const alice = await actorToken(stack, scope, 'user:alice', ['approver']);
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
        {
          ...base,
          token: await actorToken(stack, scope, 'manager:carol', ['approver']),
          decision: 'deny',
          reason: 'no',
        },
      ],
    });
  });
  expect(out.result.calls[1]!.state).toBe('FAILED');
  expect(await failedTasks(out.handle)).toBe(0);
});

test('a verified run records the subject and the token digest, never the token; the approver is the verified principal', async () => {
  let token = '';
  let carolToken = '';
  const out = await runAgent(
    stack,
    'verified-approval',
    input({ scenario: 'two-debits', vars }),
    async (handle) => {
      const p = await waitPending(handle);
      const scope = { purpose: 'approve', run: handle.workflowId, call: p.logicalCallId } as const;
      carolToken = await actorToken(stack, scope, 'manager:carol', ['approver']);
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
    {
      identityToken: async (run) =>
        (token = await stack.identity.issueFor({ purpose: 'start', run }, 'user:alice', 'acme')),
    },
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
    const scope = { purpose: 'cancel', run: handle.workflowId } as const;
    const bob = await actorToken(stack, scope, 'user:bob', []);
    await expect(
      handle.executeUpdate(requestCancelUpdate, { args: [{ token: bob, reason: 'because' }] }),
    ).rejects.toMatchObject(typed('Actor.Forbidden'));
    const globexOps = await actorToken(stack, scope, 'ops:gus', ['operator'], 'globex');
    await expect(
      handle.executeUpdate(requestCancelUpdate, { args: [{ token: globexOps, reason: 'because' }] }),
    ).rejects.toMatchObject(typed('Actor.Forbidden'));
    await handle.executeUpdate(requestCancelUpdate, {
      args: [{ token: await actorToken(stack, scope, 'ops:bob', ['operator']), reason: 'stop it' }],
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

describe('the opening rides on the first model call', () => {
  /** The run ended at its opening: refused with `code`, no model call recorded, these activities, no effect. */
  async function expectRefusedAtOpening(out: RunOutcome, code: string, activities: string[], effectsBefore: number) {
    expect(out.result.stopReason).toBe('authorization_denied');
    expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({
      identity: { verified: false, code },
    });
    expect(out.ledger.events.some((e) => e.type === 'ModelRequestStarted')).toBe(false);
    expect(await scheduled(out.handle)).toEqual(activities);
    expect(await failedTasks(out.handle)).toBe(0);
    expect(await effects()).toBe(effectsBefore);
  }

  const startOf = (run: string) => ({ purpose: 'start', run }) as const;
  const refusals: [string, string, StartToken][] = [
    [
      'a token for another tenant',
      'Identity.Mismatch',
      (run) => stack.identity.issueFor(startOf(run), 'user:alice', 'globex'),
    ],
    [
      'a token for another principal',
      'Identity.Mismatch',
      (run) => stack.identity.issueFor(startOf(run), 'user:bob', 'acme'),
    ],
    [
      'a token for another audience',
      'Identity.Invalid',
      (run) => stack.identity.issueFor(startOf(run), 'user:alice', 'acme', [], { audience: 'another-service' }),
    ],
  ];
  test.each(refusals)('%s opens no run, and the model is never asked', async (_name, code, token) => {
    const before = await effects();
    const counted = askedModel();
    const out = await runAgent(stack, `opening-${code}`, input({ scenario: 'two-debits', vars }), undefined, {
      identityToken: token,
      models: [counted.model],
    });
    expect(counted.calls()).toBe(0);
    // One activity: the first planning turn, which refused before calling the model.
    await expectRefusedAtOpening(out, code, ['planTurn'], before);
  });

  test('a verified run asks the model once for its first turn and schedules no identity activity', async () => {
    const counted = askedModel();
    const out = await runAgent(stack, 'opening-ok', input(), undefined, { models: [counted.model] });
    expect(out.result.stopReason).toBe('completed');
    expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({
      identity: { verified: true, subject: 'user:alice' },
    });
    // The ledger tells the first turn as any other: the run was created, then the model was asked and answered.
    expect(out.ledger.events.slice(0, 3).map((e) => e.type)).toEqual([
      'RunCreated',
      'ModelRequestStarted',
      'ModelResponseRecorded',
    ]);
    const types = await scheduled(out.handle);
    expect(types).not.toContain('verifyIdentity');
    expect(types.filter((t) => t === 'planTurn')).toHaveLength(counted.calls());
  });

  test('when the first model call fails, the run still verifies and records its identity, then stops model_failed', async () => {
    const before = await effects();
    const counted = askedModel({ failWith: 'Planner.Unavailable' });
    const out = await runAgent(stack, 'opening-model-down', input(), undefined, { models: [counted.model] });
    expect(out.result.stopReason).toBe('model_failed');
    expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({
      identity: { verified: true, subject: 'user:alice' },
    });
    expect(out.ledger.events.map((e) => e.type)).toEqual(['RunCreated', 'ModelRequestStarted', 'RunCompleted']);
    expect(counted.calls()).toBe(1);
    // The first turn could not say who the token names, so the run asked the identity activity on its own.
    expect(await scheduled(out.handle)).toEqual(['planTurn', 'verifyIdentity']);
    expect(await effects()).toBe(before);
  });

  test("a model's own Identity.* failure on turn 1 is recorded as the model's, not as a refused identity", async () => {
    const counted = askedModel({ failWith: 'Identity.Invalid' });
    const out = await runAgent(stack, 'opening-model-identity-type', input(), undefined, { models: [counted.model] });
    expect(out.result.stopReason).toBe('model_failed');
    expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({ identity: { verified: true } });
    expect(await scheduled(out.handle)).toEqual(['planTurn', 'verifyIdentity']);
  });

  test('a run with no time left for a model call verifies its identity on its own, then stops at its deadline', async () => {
    const counted = askedModel();
    // The deadline is inside the recovery reserve (2 s) at once: no model call can be scheduled.
    const out = await runAgent(stack, 'opening-no-time', input({ deadlineAt: deadlineIn(2_300) }), undefined, {
      models: [counted.model],
    });
    expect(out.result.stopReason).toBe('deadline_exceeded');
    expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({ identity: { verified: true } });
    expect(await scheduled(out.handle)).toEqual(['verifyIdentity']);
    expect(counted.calls()).toBe(0);
  });

  test('a run cancelled while its opening plans never acts on that plan', async () => {
    const before = await effects();
    const counted = askedModel({ delayMs: 3_000 });
    const out = await runAgent(
      stack,
      'opening-cancelled',
      input(),
      async (handle) => {
        // While the first model call (which verified the token) is still thinking, the run's principal stops it.
        await waitFor(() => counted.calls() === 1);
        await handle.executeUpdate(requestCancelUpdate, {
          args: [
            {
              token: await stack.identity.issueFor({ purpose: 'cancel', run: handle.workflowId }, 'user:alice', 'acme'),
              reason: 'changed my mind',
            },
          ],
        });
      },
      { models: [counted.model] },
    );
    expect(out.result.stopReason).toBe('operator_stopped');
    expect(out.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({ identity: { verified: true } });
    expect(out.ledger.events.some((e) => e.type === 'DispatchIntentRecorded')).toBe(false);
    expect(counted.calls()).toBe(1);
    expect(await effects()).toBe(before);
  });

  test('a planner built before this change (it ignores the opening) cannot open a run for someone else', async () => {
    const before = await effects();
    const ignoresOpening = (built: Activities): Activities => ({
      ...built,
      planTurn: ({ opening: _ignored, ...req }) => built.planTurn(req),
    });
    const refused = await runAgent(stack, 'opening-old-planner', input(), undefined, {
      identityToken: (run) => stack.identity.issueFor(startOf(run), 'user:alice', 'globex'),
      activities: ignoresOpening,
    });
    await expectRefusedAtOpening(refused, 'Identity.Mismatch', ['planTurn', 'verifyIdentity'], before);
    // With a token that names the run's principal, the old planner's first turn is used once the token verified.
    const served = await runAgent(stack, 'opening-old-planner-ok', input(), undefined, { activities: ignoresOpening });
    expect(served.result.stopReason).toBe('completed');
    expect(served.ledger.events.find((e) => e.type === 'RunCreated')).toMatchObject({ identity: { verified: true } });
    expect((await scheduled(served.handle)).slice(0, 3)).toEqual(['planTurn', 'verifyIdentity', 'dispatchTool']);
  });

  test('the run checks again what its opening verified: an identity for another tenant is refused', async () => {
    const before = await effects();
    // A planner that verifies the token against the principal the token names, not the run's.
    const checksTheWrongPrincipal = (built: Activities): Activities => ({
      ...built,
      planTurn: (req) =>
        built.planTurn(
          req.opening
            ? { ...req, opening: { ...req.opening, principal: { id: 'user:alice', tenant: 'globex' } } }
            : req,
        ),
    });
    const out = await runAgent(stack, 'opening-recheck', input(), undefined, {
      identityToken: (run) => stack.identity.issueFor(startOf(run), 'user:alice', 'globex'),
      activities: checksTheWrongPrincipal,
    });
    await expectRefusedAtOpening(out, 'Identity.Mismatch', ['planTurn'], before);
  });
});
