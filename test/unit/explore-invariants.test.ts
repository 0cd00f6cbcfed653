/**
 * The explorer's universal invariants, fed synthetic durable records: a clean run holds every one of them, and
 * for each invariant a record set that breaks it is reported (so each check can fail).
 */
import type { LedgerEvent, LedgerEventBody, LeftStanding } from '../../src/domain/ledger-events';
import { reduce } from '../../src/domain/reducer';
import {
  checkInvariants,
  INVARIANT_IDS,
  violatedGroups,
  type EffectRow,
  type InvariantId,
  type RequestEntry,
  type RunRecords,
} from '../../lab/faults/explore-invariants';
import { ALICE_RUN_CREATED } from '../helpers/ledger-events';

let seq = 0;
const ev = (body: LedgerEventBody): LedgerEvent =>
  ({ ...body, seq: ++seq, at: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z` }) as LedgerEvent;

const intentOf = (call: string, key: string, hash = `h_${call}`, toolName = 'wallet_debit') => ({
  runId: 'r1',
  providerCallId: `p_${call}`,
  logicalCallId: call,
  operationKey: key,
  toolName,
  toolVersion: 1,
  argumentsHash: hash,
  principalId: 'user:alice',
  tenant: 'acme',
  policyVersion: 'p/1',
  deadlineAt: '2026-01-01T00:10:00.000Z',
});

/** A model call proposed, canonicalized, authorized and intent-recorded, then dispatched once. */
function callEvents(
  call: string,
  key: string,
  opts: { hash?: string; toolName?: string; origin?: 'model' | 'compensation' } = {},
): LedgerEvent[] {
  const hash = opts.hash ?? `h_${call}`;
  const toolName = opts.toolName ?? 'wallet_debit';
  return [
    ev({
      type: 'ToolProposalRecorded',
      turn: 1,
      logicalCallId: call,
      providerCallId: `p_${call}`,
      toolName,
      origin: opts.origin ?? 'model',
    }),
    ev({ type: 'ArgumentsCanonicalized', logicalCallId: call, toolVersion: 1, argumentsHash: hash, operationKey: key }),
    ev({ type: 'DispatchIntentRecorded', logicalCallId: call, intent: intentOf(call, key, hash, toolName) }),
    ev({ type: 'ToolAttemptStarted', logicalCallId: call, dispatch: 1, keyUsed: key, service: 'wallet' }),
  ];
}

const opening = (): LedgerEvent[] => {
  seq = 0;
  return [ev(ALICE_RUN_CREATED), ev({ type: 'ModelRequestStarted', turn: 1 })];
};

const succeeded = (call: string, receipt: string): LedgerEvent =>
  ev({
    type: 'ToolResultRecorded',
    logicalCallId: call,
    state: 'SUCCEEDED',
    attempts: 1,
    receipt,
    replayed: false,
    fence: 1001,
  });
const stop = (
  stopReason: 'completed' | 'tool_failed' | 'outcome_unknown' | 'budget_exhausted' | 'deadline_exceeded',
  detail = '',
  leftStanding: LeftStanding[] = [],
): LedgerEvent => ev({ type: 'RunCompleted', stopReason, detail, leftStanding });

const effect = (operationKey: string, receipt = `rcpt_${operationKey}`, service = 'wallet'): EffectRow => ({
  service,
  operationKey,
  receipt,
  kind: 'wallet.charge',
});
let rid = 0;
const request = (
  operationKey: string,
  fence: number,
  outcome = 'completed',
  argumentsHash = `h_${operationKey}`,
): RequestEntry => ({
  service: 'wallet',
  id: ++rid,
  operationKey,
  argumentsHash,
  fence,
  outcome,
});

function records(events: LedgerEvent[], patch: Partial<RunRecords> = {}): RunRecords {
  return {
    strategy: 'same_key_replay',
    events,
    projection: reduce(events),
    effects: [],
    requests: [],
    hashBefore: 'abc',
    hashAfter: 'abc',
    completed: true,
    ...patch,
  };
}

/** The clean run: one debit, committed once, recorded SUCCEEDED, run completed. */
function clean(): RunRecords {
  const events = [
    ...opening(),
    ...callEvents('lc_a', 'op_a', { hash: 'h_op_a' }),
    succeeded('lc_a', 'rcpt_op_a'),
    stop('completed', 'done'),
  ];
  return records(events, { effects: [effect('op_a')], requests: [request('op_a', 1001)] });
}

const ids = (r: RunRecords): InvariantId[] => [...new Set(checkInvariants(r).map((v) => v.invariant))].sort();

describe('the universal invariants', () => {
  test('a clean run holds every invariant', () => {
    expect(checkInvariants(clean())).toEqual([]);
  });

  test('every invariant has a case below that breaks it', () => {
    expect(INVARIANT_IDS).toHaveLength(11);
  });

  describe('(a) at most one effect per intent, every effect matches an intent (safe strategies)', () => {
    test('two effects under one key are reported', () => {
      const r = clean();
      expect(ids({ ...r, effects: [effect('op_a', 'r1'), effect('op_a', 'r2')] })).toEqual(['one_effect_per_intent']);
    });

    test('an effect under a key no DispatchIntentRecorded names is an orphan', () => {
      const r = clean();
      const out = checkInvariants({ ...r, effects: [...r.effects, effect('op_fresh_attempt_key')] });
      expect(out).toHaveLength(1);
      expect(out[0]).toMatchObject({ invariant: 'effect_matches_intent', subject: 'op_fresh_attempt_key' });
      expect(out[0]!.message).toMatch(/orphan/);
    });

    test('one business intent that took effect under two keys is reported', () => {
      const events = [
        ...opening(),
        ...callEvents('lc_a', 'op_a', { hash: 'same' }),
        succeeded('lc_a', 'r1'),
        ...callEvents('lc_b', 'op_b', { hash: 'same' }),
        succeeded('lc_b', 'r2'),
        stop('completed'),
      ];
      const r = records(events, { effects: [effect('op_a'), effect('op_b')] });
      expect(ids(r)).toEqual(['one_effect_per_intent']);
      // two different intents (other arguments) each taking effect once is fine
      const events2 = [
        ...opening(),
        ...callEvents('lc_a', 'op_a'),
        succeeded('lc_a', 'r1'),
        ...callEvents('lc_b', 'op_b'),
        succeeded('lc_b', 'r2'),
        stop('completed'),
      ];
      expect(checkInvariants(records(events2, { effects: [effect('op_a'), effect('op_b')] }))).toEqual([]);
    });

    test('a key named by two intents with other arguments is reported', () => {
      const events = [
        ...opening(),
        ...callEvents('lc_a', 'op_a', { hash: 'h1' }),
        ...callEvents('lc_b', 'op_a', { hash: 'h2' }),
        stop('completed'),
      ];
      expect(ids(records(events, { effects: [effect('op_a')] }))).toContain('effect_matches_intent');
    });

    test('under blind_retry (the lab demo of the bug) (a) is not checked', () => {
      const r = clean();
      expect(
        checkInvariants({ ...r, strategy: 'blind_retry', effects: [...r.effects, effect('op_attempt_2')] }),
      ).toEqual([]);
      expect(ids({ ...r, strategy: 'check_receipt', effects: [...r.effects, effect('op_attempt_2')] })).toEqual([
        'effect_matches_intent',
      ]);
    });
  });

  describe('(b) standing effects at a stop other than completed', () => {
    function stoppedWithDebit(
      detail: string,
      extra: () => LedgerEvent[] = () => [],
      leftStanding: LeftStanding[] = [],
    ): LedgerEvent[] {
      const [proposal, ...rest] = callEvents('lc_a', 'op_a');
      return [
        ...opening(),
        proposal!,
        ev({
          type: 'CompensationRegistered',
          forwardCallId: 'lc_a',
          compensationCallId: 'cmp_lc_a',
          toolName: 'wallet_refund',
          operationKey: 'op_refund',
          argumentsHash: 'hr',
        }),
        ...rest,
        succeeded('lc_a', 'r1'),
        ...extra(),
        stop('budget_exhausted', detail, leftStanding),
      ];
    }

    test('an effect left standing, neither compensated nor named in the detail, is reported', () => {
      const r = records(stoppedWithDebit('turn budget of 4 used'), { effects: [effect('op_a')] });
      const out = checkInvariants(r);
      expect(out.map((v) => v.invariant)).toEqual(['standing_effect_settled']);
      expect(out[0]!.message).toMatch(/budget_exhausted/);
    });

    test('named in the stop\u2019s leftStanding field: holds; named only in the prose: reported', () => {
      const left: LeftStanding = {
        logicalCallId: 'lc_a',
        toolName: 'wallet_debit',
        operationKey: 'op_a',
        state: 'SUCCEEDED',
        why: 'left_by_choice',
      };
      const named = records(
        stoppedWithDebit('budget', () => [], [left]),
        { effects: [effect('op_a')] },
      );
      expect(checkInvariants(named)).toEqual([]);
      // The call id in the prose names nothing: only the structured field counts.
      const prose = records(stoppedWithDebit('left for an operator: lc_a (op_a) stands'), {
        effects: [effect('op_a')],
      });
      expect(ids(prose)).toEqual(['standing_effect_settled']);
    });

    test('compensated with an OFFSET whose refund exists downstream: holds; without the refund effect: reported', () => {
      const compensated = stoppedWithDebit('budget', () => [
        ev({ type: 'CompensationStarted', forwardCallId: 'lc_a', compensationCallId: 'cmp_lc_a', reason: 'stop' }),
        ...callEvents('cmp_lc_a', 'op_refund', { toolName: 'wallet_refund', origin: 'compensation' }),
        succeeded('cmp_lc_a', 'rcpt_op_refund'),
        ev({
          type: 'CompensationCompleted',
          forwardCallId: 'lc_a',
          compensationCallId: 'cmp_lc_a',
          outcome: 'OFFSET',
          detail: 'refunded',
        }),
      ]);
      expect(checkInvariants(records(compensated, { effects: [effect('op_a'), effect('op_refund')] }))).toEqual([]);
      expect(ids(records(compensated, { effects: [effect('op_a')] }))).toEqual(['standing_effect_settled']);
    });

    test('a completed run may leave its effects standing', () => {
      expect(checkInvariants(clean())).toEqual([]);
    });
  });

  describe('(c) FAILED without effect, intent before dispatch, fences and arguments', () => {
    test('a call FAILED while the downstream holds an effect under its key is reported', () => {
      // A defect that settles a call FAILED without evidence while the downstream holds its effect.
      const events = [
        ...opening(),
        ...callEvents('lc_a', 'op_a'),
        ev({
          type: 'ToolEffectReconciled',
          logicalCallId: 'lc_a',
          via: 'receipt_lookup',
          outcome: 'FAILED',
          detail: 'x',
        }),
        stop('tool_failed', 'compensated, not rolled back'),
      ];
      const out = checkInvariants(records(events, { effects: [effect('op_a')] }));
      expect(out.map((v) => v.invariant)).toContain('failed_means_no_effect');
      expect(out.find((v) => v.invariant === 'failed_means_no_effect')!.message).toMatch(/lc_a .* is FAILED/);
      // the same records without the effect hold
      expect(checkInvariants(records(events))).toEqual([]);
    });

    test('a dispatch before its intent (a reducer violation) is reported', () => {
      const events = [
        ...opening(),
        ...callEvents('lc_a', 'op_a').filter((e) => e.type !== 'DispatchIntentRecorded'),
        stop('completed'),
      ];
      expect(ids(records(events))).toEqual(['intent_before_dispatch']);
    });

    test('a request admitted under a stale fence is reported; refused, it is fine', () => {
      const r = clean();
      expect(ids({ ...r, requests: [request('op_a', 2001), request('op_a', 1001, 'replayed')] })).toEqual([
        'fence_and_arguments',
      ]);
      expect(
        checkInvariants({ ...r, requests: [request('op_a', 2001), request('op_a', 1001, 'Fence.Stale')] }),
      ).toEqual([]);
    });

    test('a request admitted under a used key with other arguments is reported; refused, it is fine', () => {
      const r = clean();
      const other = request('op_a', 1002, 'replayed', 'other');
      expect(ids({ ...r, requests: [request('op_a', 1001), other] })).toEqual(['fence_and_arguments']);
      const refused = request('op_a', 1002, 'Idempotency.ArgumentsMismatch', 'other');
      expect(checkInvariants({ ...r, requests: [request('op_a', 1001), refused] })).toEqual([]);
    });
  });

  describe('(d) rebuilt hash, deterministic replay, closed before the deadline', () => {
    test('a fresh worker rebuilding another hash is reported; a hash never measured before is not', () => {
      expect(ids({ ...clean(), hashAfter: 'def' })).toEqual(['projection_rebuilt']);
      expect(checkInvariants({ ...clean(), hashBefore: '' })).toEqual([]);
    });

    test('no worker could rebuild the run: reported', () => {
      const r = clean();
      const { projection: _p, ...rest } = r;
      expect(ids({ ...rest, events: [], hashAfter: '' })).toEqual(['projection_rebuilt']);
    });

    test('a determinism error in replay is reported', () => {
      const out = checkInvariants({ ...clean(), replayError: 'DeterminismViolationError: nondeterminism' });
      expect(out).toEqual([
        { invariant: 'replay_deterministic', message: 'DeterminismViolationError: nondeterminism' },
      ]);
    });

    test('a run still open after its deadline plus grace is reported', () => {
      expect(ids({ ...clean(), completed: false })).toEqual(['closed_before_deadline']);
    });
  });

  test('violatedGroups names the groups in order', () => {
    const out = checkInvariants({
      ...clean(),
      completed: false,
      effects: [effect('op_a'), effect('op_a'), effect('zz')],
    });
    expect(violatedGroups(out)).toBe('ad');
  });
});
