import type { LedgerEvent, LedgerEventBody } from '../../src/domain/ledger-events';
import {
  projectionHash,
  reduce,
  REDUCER_VERSION,
  UnsupportedReducerVersion,
  unknownCalls,
} from '../../src/domain/reducer';

let seq = 0;
const ev = (body: LedgerEventBody): LedgerEvent =>
  ({ ...body, seq: ++seq, at: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z` }) as LedgerEvent;
const intent = {
  runId: 'r1',
  providerCallId: 'call_a',
  logicalCallId: 'lc_1_a',
  operationKey: 'op_a',
  toolName: 'wallet_debit',
  toolVersion: 1,
  argumentsHash: 'h',
  principalId: 'user:alice',
  tenant: 'acme',
  policyVersion: 'p/1',
  deadlineAt: '2026-01-01T00:10:00.000Z',
};
function opening(): LedgerEvent[] {
  seq = 0;
  return [
    ev({
      type: 'RunCreated',
      runId: 'r1',
      principalId: 'user:alice',
      tenant: 'acme',
      strategy: 'check_receipt',
      deadlineAt: intent.deadlineAt,
      budgets: { maxTurns: 4, maxToolCalls: 4, maxHistoryEvents: 2000, noProgressTurns: 2, maxProposalsPerTurn: 8 },
      reducerVersion: 1,
      onAbort: 'compensate',
      identity: { verified: true, subject: 'alice', issuer: 'test', tokenDigest: 'd', roles: [] },
    }),
    ev({ type: 'ModelRequestStarted', turn: 1 }),
    ev({
      type: 'ToolProposalRecorded',
      turn: 1,
      logicalCallId: 'lc_1_a',
      providerCallId: 'call_a',
      toolName: 'wallet_debit',
      origin: 'model',
    }),
    ev({
      type: 'ArgumentsCanonicalized',
      logicalCallId: 'lc_1_a',
      toolVersion: 1,
      argumentsHash: 'h',
      operationKey: 'op_a',
    }),
    ev({
      type: 'AuthorizationAllowed',
      logicalCallId: 'lc_1_a',
      principalId: 'user:alice',
      tenant: 'acme',
      origin: 'model',
      scope: 'wallet.charge',
      action: 'wallet.debit',
      resource: 'acme/account/acct_1',
      argumentsHash: 'h',
      policyVersion: 'p/1',
      issuedAt: 'x',
      expiresAt: 'y',
      reason: 'ok',
    }),
    ev({ type: 'DispatchIntentRecorded', logicalCallId: 'lc_1_a', intent }),
    ev({ type: 'ToolAttemptStarted', logicalCallId: 'lc_1_a', dispatch: 1, keyUsed: 'op_a' }),
    ev({ type: 'ToolOutcomeMarkedUnknown', logicalCallId: 'lc_1_a', cause: 'timeout:START_TO_CLOSE', attempts: 3 }),
  ];
}

describe('the versioned reducer', () => {
  test('replay(events, reducerVersion) gives the same projection hash', () => {
    const events = opening();
    expect(projectionHash(reduce(events, REDUCER_VERSION))).toBe(
      projectionHash(reduce(JSON.parse(JSON.stringify(events)) as LedgerEvent[], REDUCER_VERSION)),
    );
  });

  test('a different history gives a different hash', () => {
    const events = opening();
    expect(projectionHash(reduce(events))).not.toBe(projectionHash(reduce(events.slice(0, -1))));
  });

  test('a lost response leaves the call UNKNOWN, not FAILED, and the run cannot count it as settled', () => {
    const p = reduce(opening());
    expect(p.calls['lc_1_a']?.state).toBe('UNKNOWN');
    expect(unknownCalls(p)).toEqual(['lc_1_a']);
  });

  test('reconciliation settles the call with the receipt it found', () => {
    const events = opening();
    events.push(
      ev({
        type: 'ToolEffectReconciled',
        logicalCallId: 'lc_1_a',
        via: 'receipt_lookup',
        outcome: 'SUCCEEDED',
        receipt: 'rcpt_1',
        detail: 'found',
      }),
    );
    const p = reduce(events);
    expect(p.calls['lc_1_a']).toMatchObject({ state: 'SUCCEEDED', receipt: 'rcpt_1', reconciledVia: 'receipt_lookup' });
    expect(unknownCalls(p)).toEqual([]);
    expect(p.violations).toEqual([]);
  });

  test('no dispatch before DispatchIntentRecorded: a dispatch without an intent is a recorded violation', () => {
    const events = opening().filter((e) => e.type !== 'DispatchIntentRecorded');
    const p = reduce(events);
    expect(p.violations).toHaveLength(1);
    expect(p.violations[0]).toContain('before DispatchIntentRecorded');
  });

  test('an unknown reducer version is refused rather than guessed', () => {
    expect(() => reduce(opening(), 99)).toThrow(UnsupportedReducerVersion);
  });
});

describe('an operator resolution and its evidence', () => {
  const checked = { service: 'wallet', operationKey: 'op_a', checkedAt: '2026-01-01T00:05:00.000Z' };
  const resolved = (outcome: 'SUCCEEDED' | 'FAILED', evidence: object, receipt?: string): LedgerEvent =>
    ev({
      type: 'ToolEffectReconciled',
      logicalCallId: 'lc_1_a',
      via: 'operator',
      outcome,
      ...(receipt ? { receipt } : {}),
      detail: 'ops:bob: why',
      evidence: { ...checked, ...evidence } as never,
    });

  test('a resolution the evidence confirms settles the call, with the receipt the downstream holds', () => {
    const p = reduce([
      ...opening(),
      resolved('SUCCEEDED', { lookup: 'found', status: 'completed', receipt: 'r_1' }, 'r_1'),
    ]);
    expect(p.calls['lc_1_a']).toMatchObject({ state: 'SUCCEEDED', receipt: 'r_1', reconciledVia: 'operator' });
    expect(p.violations).toEqual([]);
    expect(reduce([...opening(), resolved('FAILED', { lookup: 'sealed' })]).violations).toEqual([]);
  });

  test('a resolution that contradicts its evidence is a recorded violation', () => {
    const held = reduce([...opening(), resolved('FAILED', { lookup: 'found', status: 'completed', receipt: 'r_1' })]);
    expect(held.violations).toEqual([expect.stringContaining('FAILED while wallet holds the effect under op_a')]);
    const none = reduce([...opening(), resolved('SUCCEEDED', { lookup: 'sealed' }, 'stmt-42')]);
    expect(none.violations).toEqual([expect.stringContaining('SUCCEEDED while wallet holds no effect')]);
    const other = reduce([
      ...opening(),
      resolved('SUCCEEDED', { lookup: 'found', status: 'completed', receipt: 'r_1' }, 'stmt-42'),
    ]);
    expect(other.violations).toEqual([expect.stringContaining('receipt stmt-42 is not the one wallet holds')]);
  });

  test('a resolution recorded before evidence existed is taken as recorded', () => {
    seq = 0;
    const events = [
      ...opening(),
      ev({
        type: 'ToolEffectReconciled',
        logicalCallId: 'lc_1_a',
        via: 'operator',
        outcome: 'FAILED',
        detail: 'ops:bob: why',
      }),
    ];
    expect(reduce(events).violations).toEqual([]);
  });
});
