/**
 * The local model check (lab/local-model/check.ts) over crafted ledgers: a clean run passes, and each planted
 * violation is caught (the positive control of every check), as is the check's own self-test on planted copies.
 */
import { checkModelRuns, plantedViolationsMissed, type ModelRunRecord } from '../../lab/local-model/check';
import type { EffectRow } from '../../lab/faults/explore-invariants';
import type { LedgerEvent, LedgerEventBody } from '../../src/domain/ledger-events';
import type { AgentRunResult } from '../../src/domain/run';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();
const DEADLINE = at(120);

function ledger(bodies: LedgerEventBody[], stopAt = 30): LedgerEvent[] {
  return bodies.map(
    (b, i) => ({ ...b, seq: i + 1, at: b.type === 'RunCompleted' ? at(stopAt) : at(i) }) as LedgerEvent,
  );
}

const intent = (call: string, key: string): LedgerEventBody => ({
  type: 'DispatchIntentRecorded',
  logicalCallId: call,
  intent: {
    runId: 'r1',
    providerCallId: `p-${call}`,
    logicalCallId: call,
    operationKey: key,
    toolName: 'wallet_debit',
    toolVersion: 1,
    argumentsHash: `h-${call}`,
    principalId: 'user:alice',
    tenant: 'acme',
    policyVersion: 'p1',
    deadlineAt: DEADLINE,
  },
});

/** A run: one valid debit that was dispatched, one proposal rejected, then completed. */
function cleanRun(name = 'wallet #1'): ModelRunRecord {
  const result: AgentRunResult = {
    stopReason: 'completed',
    detail: 'the model answered',
    projectionHash: 'x',
    eventCount: 9,
    calls: [],
    leftStanding: [],
  };
  return {
    name,
    workflowId: `wf-${name}`,
    deadlineAt: DEADLINE,
    result,
    events: ledger([
      { type: 'ModelRequestStarted', turn: 1 },
      {
        type: 'ToolProposalRecorded',
        turn: 1,
        logicalCallId: 'c1',
        providerCallId: 'p-c1',
        toolName: 'wallet_debit',
        origin: 'model',
      },
      {
        type: 'ToolProposalRecorded',
        turn: 1,
        logicalCallId: 'c2',
        providerCallId: 'p-c2',
        toolName: 'shipping_schedule',
        origin: 'model',
      },
      {
        type: 'ArgumentsCanonicalized',
        logicalCallId: 'c1',
        toolVersion: 1,
        argumentsHash: 'h-c1',
        operationKey: 'op_1',
      },
      { type: 'ProposalRejected', logicalCallId: 'c2', code: 'Proposal.InvalidArguments', message: 'country' },
      intent('c1', 'op_1'),
      { type: 'ModelRequestStarted', turn: 2 },
      { type: 'RunCompleted', stopReason: 'completed', detail: 'the model answered', leftStanding: [] },
    ]),
  };
}
const oneEffect: EffectRow[] = [{ service: 'wallet', operationKey: 'op_1', receipt: 'rcpt_1', kind: 'debit' }];

test('a clean run passes every check, and its proposals are summarised', () => {
  const report = checkModelRuns([cleanRun()], oneEffect);
  expect(report.violations).toEqual([]);
  const s = report.runs[0]!;
  expect(s.proposals.map((p) => [p.toolName, p.verdict, p.code])).toEqual([
    ['wallet_debit', 'valid', undefined],
    ['shipping_schedule', 'rejected', 'Proposal.InvalidArguments'],
  ]);
  expect(s).toMatchObject({ stopReason: 'completed', turns: 2, intents: 1, effects: 1, marginMs: 90_000 });
});

test('a call canonicalized and then refused (tenant binding, invariants) counts as rejected', () => {
  const run = cleanRun();
  const refusedLate = ledger([
    ...run.events.filter((e) => e.type !== 'RunCompleted' && e.type !== 'DispatchIntentRecorded'),
    { type: 'ProposalRejected', logicalCallId: 'c1', code: 'Proposal.TenantMismatch', message: 'other tenant' },
    { type: 'RunCompleted', stopReason: 'completed', detail: 'the model answered', leftStanding: [] },
  ]);
  const s = checkModelRuns([{ ...run, events: refusedLate }], []).runs[0]!;
  expect(s.proposals.map((p) => [p.logicalCallId, p.verdict, p.code])).toEqual([
    ['c1', 'rejected', 'Proposal.TenantMismatch'],
    ['c2', 'rejected', 'Proposal.InvalidArguments'],
  ]);
});

describe('each check catches its violation', () => {
  test('two effects under one intent', () => {
    const effects = [...oneEffect, { service: 'wallet', operationKey: 'op_1', receipt: 'rcpt_2', kind: 'debit' }];
    const report = checkModelRuns([cleanRun()], effects);
    expect(report.violations.map((v) => v.check)).toEqual(['one_effect_per_intent']);
    expect(report.violations[0]!.message).toContain('2 effects under one intent op_1');
  });

  test('an effect no run recorded an intent for', () => {
    const effects = [...oneEffect, { service: 'wallet', operationKey: 'op_stray', receipt: 'rcpt_9', kind: 'debit' }];
    const report = checkModelRuns([cleanRun()], effects);
    expect(report.violations).toEqual([expect.objectContaining({ check: 'one_effect_per_intent', run: '' })]);
  });

  test('a proposal that was never validated', () => {
    const run = cleanRun();
    const events = run.events.filter((e) => e.type !== 'ProposalRejected');
    const report = checkModelRuns([{ ...run, events }], oneEffect);
    expect(report.violations).toEqual([
      expect.objectContaining({ check: 'every_proposal_validated', message: expect.stringContaining('c2') }),
    ]);
  });

  test('a proposal dispatched without being canonicalized', () => {
    const run = cleanRun();
    const events = run.events.filter((e) => e.type !== 'ArgumentsCanonicalized');
    const checks = checkModelRuns([{ ...run, events }], oneEffect).violations.map((v) => v.check);
    expect(checks).toEqual(['every_proposal_validated', 'every_proposal_validated']);
  });

  test('a stop after the deadline and its grace', () => {
    const run = cleanRun();
    const late = run.events.map((e) => (e.type === 'RunCompleted' ? { ...e, at: at(120 + 16) } : e));
    const report = checkModelRuns([{ ...run, events: late }], oneEffect);
    expect(report.violations).toEqual([
      expect.objectContaining({
        check: 'typed_stop_before_deadline',
        message: expect.stringContaining('16000 ms after'),
      }),
    ]);
    // Within the grace: no violation (a stop may compensate after the deadline).
    const inGrace = run.events.map((e) => (e.type === 'RunCompleted' ? { ...e, at: at(120 + 14) } : e));
    expect(checkModelRuns([{ ...run, events: inGrace }], oneEffect).violations).toEqual([]);
  });

  test('no result, an untyped stop reason, a ledger that disagrees', () => {
    const run = cleanRun();
    const { result: _r, ...noResult } = run;
    const untyped = { ...run, result: { ...run.result!, stopReason: 'gave_up' as never } };
    const noStop = { ...run, events: run.events.filter((e) => e.type !== 'RunCompleted') };
    for (const [r, text] of [
      [{ ...noResult, error: 'WorkflowFailedError: boom' }, 'no result: WorkflowFailedError: boom'],
      [untyped, 'not one of the typed stop reasons'],
      [noStop, 'no RunCompleted'],
    ] as const) {
      const v = checkModelRuns([r], oneEffect).violations;
      expect(v.map((x) => x.check)).toContain('typed_stop_before_deadline');
      expect(v.map((x) => x.message).join(' ')).toContain(text);
    }
  });
});

test('the self-test plants three violations into real records and catches all of them', () => {
  expect(plantedViolationsMissed([cleanRun()], oneEffect)).toEqual({ missed: [], notPlantable: [] });
  // Records with nothing to plant into say so, rather than claiming a catch.
  const bare = { ...cleanRun(), events: cleanRun().events.filter((e) => e.type === 'RunCompleted') };
  expect(plantedViolationsMissed([bare], []).notPlantable).toHaveLength(2);
});

test('a plant into a run that already violates is reported missed, never caught', () => {
  // The self-test compares against the records as they are: a run that already violates does not hide a plant.
  const late = cleanRun();
  const events = late.events.map((e) => (e.type === 'RunCompleted' ? { ...e, at: at(200) } : e));
  expect(plantedViolationsMissed([{ ...late, events }], oneEffect).missed).toEqual([
    'a stop recorded after the deadline',
  ]);
});
