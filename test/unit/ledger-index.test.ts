/**
 * The workflow ledger applies events in place and keeps indexes of its calls (by state, by operation key, in
 * order), so a turn costs the same at call 1,000 as at call 1. These cases check that nothing is lost for it:
 * over seeded random event sequences, after every append, the ledger's projection equals the pure reducer's and
 * every index equals a full scan of that projection. A snapshot taken earlier never changes afterwards.
 */
import type { CallState, LedgerEvent, LedgerEventBody } from '../../src/domain/ledger-events';
import { apply, emptyProjection, projectionHash, reduce, type Projection } from '../../src/domain/reducer';
import { createPrng } from '../../lab/faults/prng';
import { canonicalJson } from '../../src/domain/canonical';
import { Ledger } from '../../workflows/ledger';

const STATES: readonly CallState[] = [
  'PROPOSED',
  'VALIDATED',
  'AWAITING_APPROVAL',
  'APPROVED',
  'AUTHORIZED',
  'INTENT_RECORDED',
  'DISPATCHING',
  'UNKNOWN',
  'SUCCEEDED',
  'FAILED',
];
const CALLS = ['lc_a', 'lc_b', 'lc_c', 'lc_d', 'lc_e', 'lc_f'];
const KEYS = ['op_1', 'op_2', 'op_3'];
const ACTIONS = ['wallet.debit', 'inventory.reserve'];

/** The fault lab's seeded generator: every failure names a seed that reproduces it. */
function rng(seed: number): () => number {
  return createPrng(seed, 'ledger-index').next;
}

/** One event body the reducer reads, for a random call (sometimes one never proposed: a recorded violation). */
function randomBody(next: () => number, turn: number): LedgerEventBody {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const logicalCallId = next() < 0.05 ? 'lc_never_proposed' : pick(CALLS);
  const body = (b: Record<string, unknown>): LedgerEventBody => b as unknown as LedgerEventBody;
  switch (Math.floor(next() * 14)) {
    case 0:
    case 1:
      return body({
        type: 'ToolProposalRecorded',
        logicalCallId,
        providerCallId: `call_${Math.floor(next() * 1e6)}`,
        toolName: 'wallet_debit',
        turn,
        origin: next() < 0.2 ? 'compensation' : 'model',
      });
    case 2:
      return body({ type: 'ArgumentsCanonicalized', logicalCallId, operationKey: pick(KEYS), argumentsHash: 'h' });
    case 3:
      return body({ type: 'ApprovalRequested', logicalCallId, policyVersion: 'p/1' });
    case 4:
      return body({ type: 'ApprovalGranted', logicalCallId, approver: 'user:bob' });
    case 5:
      return body({ type: 'AuthorizationAllowed', logicalCallId, policyVersion: 'p/1', action: pick(ACTIONS) });
    case 6:
      return body({ type: 'DispatchIntentRecorded', logicalCallId, intent: { policyVersion: 'p/2' } });
    case 7:
      return body({
        type: 'ToolAttemptStarted',
        logicalCallId,
        dispatch: 1 + Math.floor(next() * 2),
        service: 'wallet',
      });
    case 8:
      return body({ type: 'ToolOutcomeMarkedUnknown', logicalCallId, attempts: 1 + Math.floor(next() * 3) });
    case 9:
      return body({
        type: 'ToolEffectReconciled',
        logicalCallId,
        outcome: pick(['SUCCEEDED', 'FAILED']),
        via: 'lookup',
      });
    case 10:
      return body({
        type: 'ToolResultRecorded',
        logicalCallId,
        state: pick(['SUCCEEDED', 'FAILED']),
        attempts: 1 + Math.floor(next() * 3),
        receipt: 'rcpt',
      });
    case 11:
      return body({ type: 'IntentRepeated', logicalCallId, outcome: pick(['SUCCEEDED', 'FAILED', 'UNKNOWN']) });
    case 12:
      return body({ type: 'CompensationCompleted', forwardCallId: logicalCallId, outcome: 'OFFSET', detail: 'd' });
    default:
      return body({ type: 'AuthorizationDenied', logicalCallId, policyVersion: 'p/1' });
  }
}

function scanIn(p: Projection, state: CallState): string[] {
  return Object.values(p.calls)
    .filter((c) => c.state === state)
    .map((c) => c.logicalCallId)
    .sort();
}

function scanKey(p: Projection, key: string): string[] {
  return Object.values(p.calls)
    .filter((c) => c.operationKey === key)
    .map((c) => c.logicalCallId);
}

/**
 * Two projections are the same data: compared as canonical JSON (what the projection hash is taken of), which for
 * this plain data gives `toEqual`'s verdict at a small part of its cost (jest's deep comparison of 7,200 pairs was
 * most of this file's time). A mismatch fails with `toEqual`'s diff, or the two texts when only they differ.
 */
function expectSameProjection(actual: Projection, expected: Projection): void {
  const a = canonicalJson(actual);
  const b = canonicalJson(expected);
  if (a === b) return;
  expect(actual).toEqual(expected);
  expect(a).toBe(b);
}

/** A window's start for `action`: 1 ms before its newest intent, so the window holds the newest ones only. */
function windowStart(p: Projection, action: string): number {
  const times = Object.values(p.calls)
    .filter((c) => c.action === action && c.firstIntentAt !== null)
    .map((c) => Date.parse(c.firstIntentAt!));
  return times.length === 0 ? 0 : Math.max(...times) - 1;
}

/** What the ledger's indexes say, in the shape `scanned` computes from a projection by full scans. */
function indexed(ledger: Ledger) {
  const p = ledger.projection;
  return {
    byState: STATES.map((state) => ({ state, ids: ledger.callsIn(state), count: ledger.countIn(state) })),
    byKey: KEYS.map((key) => ({ key, ids: ledger.callsWithKey(key).map((c) => c.logicalCallId) })),
    recent: ledger.recentCalls(3).map((c) => c.logicalCallId),
    callCount: ledger.callCount,
    pendingApprovals: ledger.pendingApprovalCount,
    intents: ACTIONS.map((action) => ({
      action,
      times: ledger.intentTimes(action, 'lc_a', -Infinity).sort(),
      windowed: ledger.intentTimes(action, 'lc_a', windowStart(p, action)).sort(),
    })),
  };
}

function scanned(p: Projection) {
  const order = Object.values(p.calls).map((c) => c.logicalCallId);
  return {
    byState: STATES.map((state) => {
      const ids = scanIn(p, state);
      return { state, ids, count: ids.length };
    }),
    byKey: KEYS.map((key) => ({ key, ids: scanKey(p, key) })),
    recent: order.slice(-3),
    callCount: order.length,
    pendingApprovals: Object.values(p.calls).filter((c) => c.approval === 'pending').length,
    intents: ACTIONS.map((action) => ({
      action,
      times: Object.values(p.calls)
        .filter((c) => c.action === action && c.firstIntentAt !== null && c.logicalCallId !== 'lc_a')
        .map((c) => Date.parse(c.firstIntentAt!))
        .sort(),
      windowed: Object.values(p.calls)
        .filter((c) => c.action === action && c.firstIntentAt !== null && c.logicalCallId !== 'lc_a')
        .map((c) => Date.parse(c.firstIntentAt!))
        .filter((t) => t > windowStart(p, action))
        .sort(),
    })),
  };
}

/**
 * Every index against a full scan, in one `expect` per check: jest builds an assertion error for each `expect`
 * call, so the 23 separate ones per append this was took most of the file's time (about 90,000 calls).
 */
function expectIndexesMatch(ledger: Ledger, p: Projection, where: string): void {
  expect({ where, ...indexed(ledger) }).toEqual({ where, ...scanned(p) });
}

describe('the ledger applies events in place and indexes its calls', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])(
    'seed %i: after every append the projection equals the pure reducer and every index a full scan',
    (seed) => {
      const next = rng(seed);
      const ledger = new Ledger();
      const events: LedgerEvent[] = [];
      const snapshots: Array<{ at: number; hash: string }> = [];
      let pure = emptyProjection();
      for (let i = 0; i < 300; i++) {
        const e = ledger.append(randomBody(next, 1 + Math.floor(i / 20)));
        events.push(e);
        pure = apply(pure, e);
        expectSameProjection(ledger.projection, pure);
        expectSameProjection(ledger.projection, reduce(events));
        expectIndexesMatch(ledger, pure, `seed ${seed} event ${i + 1} (${e.type})`);
        if (i % 50 === 0) snapshots.push({ at: i + 1, hash: projectionHash(ledger.snapshot().projection) });
      }
      // Snapshots are copies: what one said when it was taken, it still says after 300 more appends.
      for (const s of snapshots) expect(projectionHash(reduce(events.slice(0, s.at)))).toBe(s.hash);
      const taken = ledger.snapshot();
      const before = projectionHash(taken.projection);
      ledger.append({
        type: 'ToolProposalRecorded',
        logicalCallId: 'lc_late',
        providerCallId: 'c',
        toolName: 't',
        turn: 99,
        origin: 'model',
      } as LedgerEventBody);
      expect(projectionHash(taken.projection)).toBe(before);
      expect(taken.projection.calls['lc_late']).toBeUndefined();
    },
  );

  it('a continued run starts its indexes from the carried projection', () => {
    const next = rng(99);
    const first = new Ledger();
    for (let i = 0; i < 120; i++) first.append(randomBody(next, 1));
    const carried = first.snapshot();
    const second = new Ledger({ projection: carried.projection, eventCount: carried.eventCount });
    expectIndexesMatch(second, carried.projection, 'carried');
    for (let i = 0; i < 60; i++) second.append(randomBody(next, 2));
    expectIndexesMatch(second, second.projection, 'after carrying');
    // The carried projection itself is never written to.
    expect(projectionHash(carried.projection)).toBe(carried.projectionHash);
  });

  it('apply leaves the projection it is given as it was', () => {
    const next = rng(7);
    let p = emptyProjection();
    for (let i = 0; i < 200; i++) {
      const before = JSON.stringify(p);
      const e = { ...randomBody(next, 1), seq: i + 1, at: '2026-01-01T00:00:00.000Z' } as LedgerEvent;
      const q = apply(p, e);
      expect(JSON.stringify(p)).toBe(before);
      p = q;
    }
  });
});
