/**
 * The call lifecycle is monotone, and the projection agrees with the history about what was sent. Over seeded
 * random event sequences (any order, any call, events for calls never proposed among them), after every event:
 * no call's state moves to an earlier phase (src/domain/lifecycle.ts); a call that has dispatched is in flight or
 * settled, never back in validation or approval; and each call's `dispatches` is the number of
 * `ToolAttemptStarted` events the history holds for it. The positive control runs the same checks over the
 * reducer as it was (an approval reset a dispatched call to VALIDATED) and sees them fail.
 */
import { createPrng } from '../../lab/faults/prng';
import type { LedgerEvent, LedgerEventBody } from '../../src/domain/ledger-events';
import { CALL_PHASE } from '../../src/domain/lifecycle';
import { apply, emptyProjection, type Projection } from '../../src/domain/reducer';

const CALLS = ['lc_a', 'lc_b', 'lc_c'];

function randomBody(next: () => number): LedgerEventBody {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const logicalCallId = pick(CALLS);
  const body = (b: Record<string, unknown>) => b as unknown as LedgerEventBody;
  const kinds: Array<() => LedgerEventBody> = [
    () =>
      body({
        type: 'ToolProposalRecorded',
        logicalCallId,
        providerCallId: 'p',
        toolName: 't',
        turn: 1,
        origin: 'model',
      }),
    () =>
      body({ type: 'ArgumentsCanonicalized', logicalCallId, operationKey: `op_${logicalCallId}`, argumentsHash: 'h' }),
    () => body({ type: 'ProposalRejected', logicalCallId, code: 'X.Y', message: 'm' }),
    () => body({ type: 'ApprovalRequested', logicalCallId, policyVersion: 'p/1', argumentsHash: 'h', reason: 'r' }),
    () => body({ type: 'ApprovalGranted', logicalCallId, approver: 'user:carol', policyVersion: 'p/1' }),
    () => body({ type: 'ApprovalDenied', logicalCallId, approver: 'user:carol', reason: 'no' }),
    () => body({ type: 'ApprovalWithdrawn', logicalCallId, reason: 'lapsed' }),
    () => body({ type: 'AuthorizationAllowed', logicalCallId, policyVersion: 'p/1', action: 'wallet.debit' }),
    () => body({ type: 'AuthorizationDenied', logicalCallId, policyVersion: 'p/1', code: 'Authorization.Denied' }),
    () => body({ type: 'DispatchIntentRecorded', logicalCallId, intent: { policyVersion: 'p/1' } }),
    () => body({ type: 'ReauthorizationStarted', logicalCallId, cause: 'expired', attempts: 1 }),
    () => body({ type: 'ToolAttemptStarted', logicalCallId, dispatch: 1, keyUsed: 'k', service: 'wallet' }),
    () => body({ type: 'ToolOutcomeMarkedUnknown', logicalCallId, cause: 'lost', attempts: 1 }),
    () =>
      body({
        type: 'ToolEffectReconciled',
        logicalCallId,
        via: 'receipt_lookup',
        outcome: pick(['SUCCEEDED', 'FAILED']),
        detail: 'd',
      }),
    () =>
      body({
        type: 'ToolResultRecorded',
        logicalCallId,
        state: pick(['SUCCEEDED', 'FAILED']),
        attempts: 1,
        replayed: false,
      }),
  ];
  return pick(kinds)();
}

type Reducer = (p: Projection, e: LedgerEvent) => Projection;

/** What is wrong with the lifecycle over `events` reduced by `reduce`, event by event. */
function lifecycleProblems(events: readonly LedgerEvent[], reduce: Reducer): string[] {
  const problems: string[] = [];
  const attempts = new Map<string, number>();
  let p = emptyProjection();
  for (const e of events) {
    const before = p;
    p = reduce(p, e);
    if (e.type === 'ToolAttemptStarted' && before.calls[e.logicalCallId] !== undefined)
      attempts.set(e.logicalCallId, (attempts.get(e.logicalCallId) ?? 0) + 1);
    for (const c of Object.values(p.calls)) {
      const was = before.calls[c.logicalCallId];
      if (was !== undefined && CALL_PHASE[c.state] < CALL_PHASE[was.state])
        problems.push(`#${e.seq} ${e.type}: ${c.logicalCallId} went back from ${was.state} to ${c.state}`);
      if (c.dispatches > 0 && CALL_PHASE[c.state] < CALL_PHASE.DISPATCHING)
        problems.push(`#${e.seq} ${e.type}: ${c.logicalCallId} dispatched, yet ${c.state}`);
      if (c.dispatches !== (attempts.get(c.logicalCallId) ?? 0))
        problems.push(
          `#${e.seq}: ${c.logicalCallId} says ${c.dispatches} dispatches, the history ${attempts.get(c.logicalCallId) ?? 0}`,
        );
    }
  }
  return problems;
}

function sequence(seed: number, length: number): LedgerEvent[] {
  const { next } = createPrng(seed, 'lifecycle');
  return Array.from(
    { length },
    (_, i) => ({ ...randomBody(next), seq: i + 1, at: '2030-01-01T00:00:00.000Z' }) as LedgerEvent,
  );
}

describe('the call lifecycle over generated event sequences', () => {
  test.each(Array.from({ length: 40 }, (_, i) => i + 1))(
    'seed %i: no state goes back, and the projection counts the dispatches the history holds',
    (seed) => {
      expect(lifecycleProblems(sequence(seed, 400), apply)).toEqual([]);
    },
  );

  test('a decision taken again on a dispatched call is recorded on it and leaves its state', () => {
    const events = [
      {
        type: 'ToolProposalRecorded',
        logicalCallId: 'lc_a',
        providerCallId: 'p',
        toolName: 't',
        turn: 1,
        origin: 'model',
      },
      { type: 'ArgumentsCanonicalized', logicalCallId: 'lc_a', operationKey: 'op_a', argumentsHash: 'h' },
      { type: 'DispatchIntentRecorded', logicalCallId: 'lc_a', intent: { policyVersion: 'p/1' } },
      { type: 'ToolAttemptStarted', logicalCallId: 'lc_a', dispatch: 1, keyUsed: 'op_a' },
      { type: 'ReauthorizationStarted', logicalCallId: 'lc_a', cause: 'expired', attempts: 1 },
      { type: 'ApprovalRequested', logicalCallId: 'lc_a', policyVersion: 'p/1', argumentsHash: 'h', reason: 'r' },
      { type: 'ApprovalDenied', logicalCallId: 'lc_a', approver: 'user:carol', reason: 'no' },
    ].map((b, i) => ({ ...b, seq: i + 1, at: '2030-01-01T00:00:00.000Z' }) as unknown as LedgerEvent);
    const p = events.reduce(apply, emptyProjection());
    expect(p.calls['lc_a']).toMatchObject({ state: 'DISPATCHING', reauthorizations: 1, approval: 'denied' });
    expect(p.violations).toEqual([]);
    expect(lifecycleProblems(events, apply)).toEqual([]);
  });
});

describe('the checks can fail', () => {
  /** The reducer as it was: an approval request or grant reset a call to AWAITING_APPROVAL or VALIDATED. */
  const resetting: Reducer = (p, e) => {
    const next = apply(p, e);
    if ((e.type === 'ApprovalRequested' || e.type === 'ApprovalGranted') && next.calls[e.logicalCallId]) {
      const state = e.type === 'ApprovalRequested' ? 'AWAITING_APPROVAL' : 'VALIDATED';
      return { ...next, calls: { ...next.calls, [e.logicalCallId]: { ...next.calls[e.logicalCallId]!, state } } };
    }
    return next;
  };

  test('the old reset of a dispatched call by an approval is caught on the same sequences', () => {
    const caught = Array.from({ length: 40 }, (_, i) => lifecycleProblems(sequence(i + 1, 400), resetting).length);
    expect(caught.filter((n) => n > 0).length).toBeGreaterThan(30);
  });

  test('a projection that loses a dispatch is caught', () => {
    const forgetful: Reducer = (p, e) => (e.type === 'ToolAttemptStarted' ? p : apply(p, e));
    const caught = Array.from({ length: 10 }, (_, i) => lifecycleProblems(sequence(i + 1, 400), forgetful).length);
    expect(caught.every((n) => n > 0)).toBe(true);
  });
});
