/**
 * Issue #27 item 5, the reading side: what a stop leaves standing is read from the stop event's structured
 * `leftStanding` field by every reader (the explorer's invariants, the lab write-up and report, `ledgerloop show`),
 * never searched for in the stop's prose. Each reader is fed the same two stops: one whose field names the debit
 * and whose prose does not, and one whose prose names the debit and whose field is empty.
 */
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { showJson, showText } from '../../cli/commands/show';
import type { RunView } from '../../cli/commands/read-run';
import { eventLine } from '../../cli/format';
import { buildListQuery } from '../../cli/list-query';
import { checkInvariants } from '../../lab/faults/explore-invariants';
import { callRow, type Evidence } from '../../lab/faults/evidence';
import { renderCaseTable } from '../../lab/faults/report';
import type { CaseResult } from '../../lab/faults/case-runner';
import { Timeline } from '../../lab/faults/timeline';
import { labWriteUp, leftStandingOf, leftStandingSentence } from '../../lab/faults/writeup';
import type { PlannedCase } from '../../lab/faults/plan';
import type { LedgerEvent, LedgerEventBody, LeftStanding } from '../../src/domain/ledger-events';
import { reduce } from '../../src/domain/reducer';
import { ALICE_RUN_CREATED } from '../helpers/ledger-events';

let seq = 0;
const ev = (body: LedgerEventBody): LedgerEvent =>
  ({ ...body, seq: ++seq, at: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z` }) as LedgerEvent;

const LEFT: LeftStanding = {
  logicalCallId: 'lc_1_a',
  toolName: 'wallet_debit',
  operationKey: 'op_debit_600',
  state: 'UNKNOWN',
  why: 'outcome_unknown',
};

/** A debit dispatched, its response lost (UNKNOWN), then the run stops deadline_exceeded. */
function stopped(detail: string, leftStanding: LeftStanding[]): LedgerEvent[] {
  seq = 0;
  return [
    ev(ALICE_RUN_CREATED),
    ev({ type: 'ModelRequestStarted', turn: 1 }),
    ev({
      type: 'ToolProposalRecorded',
      turn: 1,
      logicalCallId: 'lc_1_a',
      providerCallId: 'p1',
      toolName: 'wallet_debit',
      origin: 'model',
    }),
    ev({
      type: 'ArgumentsCanonicalized',
      logicalCallId: 'lc_1_a',
      toolVersion: 1,
      argumentsHash: 'h1',
      operationKey: 'op_debit_600',
    }),
    ev({
      type: 'DispatchIntentRecorded',
      logicalCallId: 'lc_1_a',
      intent: {
        runId: 'r1',
        providerCallId: 'p1',
        logicalCallId: 'lc_1_a',
        operationKey: 'op_debit_600',
        toolName: 'wallet_debit',
        toolVersion: 1,
        argumentsHash: 'h1',
        principalId: 'user:alice',
        tenant: 'acme',
        policyVersion: 'p/1',
        deadlineAt: '2026-01-01T00:10:00.000Z',
      },
    }),
    ev({
      type: 'ToolAttemptStarted',
      logicalCallId: 'lc_1_a',
      dispatch: 1,
      keyUsed: 'op_debit_600',
      service: 'wallet',
    }),
    ev({ type: 'ToolOutcomeMarkedUnknown', logicalCallId: 'lc_1_a', attempts: 1, cause: 'response lost' }),
    ev({ type: 'RunCompleted', stopReason: 'deadline_exceeded', detail, leftStanding }),
  ];
}

/** The field names the debit; the prose says nothing of it. */
const fieldOnly = (): LedgerEvent[] => stopped('the deadline came too close', [LEFT]);
/** The prose names the debit; the field is empty (the defect the issue found: a check that greps the prose). */
const proseOnly = (): LedgerEvent[] => stopped('left for an operator: lc_1_a (op_debit_600) stands', []);

const effect = { service: 'wallet', operationKey: 'op_debit_600', receipt: 'wd_1', kind: 'wallet.charge' };
const request = {
  service: 'wallet',
  id: 1,
  operationKey: 'op_debit_600',
  argumentsHash: 'h1',
  fence: 1001,
  outcome: 'completed',
};

describe('the explorer invariants read leftStanding, not the prose', () => {
  const records = (events: LedgerEvent[]) => ({
    strategy: 'same_key_replay' as const,
    events,
    projection: reduce(events),
    effects: [effect],
    requests: [request],
    hashBefore: 'x',
    hashAfter: 'x',
    completed: true,
  });

  test('named in the field: every invariant holds', () => {
    expect(checkInvariants(records(fieldOnly()))).toEqual([]);
  });

  test('named only in the prose: the standing effect and the UNKNOWN call are both reported', () => {
    const out = checkInvariants(records(proseOnly()));
    expect(out.map((v) => v.invariant).sort()).toEqual(['standing_effect_settled', 'unknown_named_at_stop']);
    expect(out.every((v) => v.subject === 'lc_1_a')).toBe(true);
  });
});

describe('the lab write-up and report read leftStanding', () => {
  const pc = {
    expect: [{ metric: 'completed', op: '==', value: true }],
    strategy: 'same_key_replay',
  } as unknown as PlannedCase;
  const evidence = (events: LedgerEvent[]): Evidence => {
    const projection = reduce(events);
    return {
      metrics: {
        dispatch_count: 1,
        business_effect_count: 1,
        logical_call_count: 1,
        attempt_count: 1,
        projection_hash_stable: true,
        projection_hash_after: 'abc',
        projection_hash_before: 'abc',
        stale_dispatch_count: 0,
        left_standing_count: leftStandingOf(events)?.length ?? 0,
      },
      calls: Object.values(projection.calls).map(callRow),
      requestLog: { refusedBy: {} },
      invariants: [],
      rebuilt: { reducerVersion: 1, eventCount: events.length, events, projection, projectionHash: 'abc' },
      historyEvents: 40,
    } as unknown as Evidence;
  };

  test('the field names the call: the write-up names it, its key, state and why', () => {
    const lines = labWriteUp({ pc, evidence: evidence(fieldOnly()), timeline: new Timeline(), failures: [] });
    const last = lines[lines.length - 1]!;
    expect(last).toMatch(/stopped deadline_exceeded and left 1 effect\(s\) standing for an operator/);
    expect(last).toMatch(/lc_1_a \(wallet_debit, key op_debit_600…, UNKNOWN, outcome_unknown\)/);
    expect(lines.join(' ')).not.toMatch(/No call was left UNKNOWN/);
  });

  test('the field is empty: no sentence is made from the prose', () => {
    expect(leftStandingSentence(proseOnly())).toBeUndefined();
    expect(leftStandingSentence(fieldOnly())).toMatch(/lc_1_a/);
  });

  test('nothing UNKNOWN and nothing left: the write-up says so and cites the field', () => {
    const events = stopped('done', []).filter((e) => e.type !== 'ToolOutcomeMarkedUnknown');
    const lines = labWriteUp({ pc, evidence: evidence(events), timeline: new Timeline(), failures: [] });
    expect(lines[lines.length - 1]).toMatch(/the stop left nothing standing \(RunCompleted.leftStanding is empty\)/);
  });

  test('the report table has a column of what the stop left standing', () => {
    const row = (n: number) =>
      ({ name: 'c', passed: true, metrics: { left_standing_count: n }, durationMs: 1 }) as unknown as CaseResult;
    const table = renderCaseTable([row(1), row(0)]).split('\n');
    expect(table[0]).toMatch(/\bleft\b/);
    const col = table[0]!.indexOf('left');
    expect(table[2]!.slice(col, col + 4).trim()).toBe('1');
    expect(table[3]!.slice(col, col + 4).trim()).toBe('0');
  });
});

describe('ledgerloop show reads leftStanding', () => {
  const view = (events: LedgerEvent[]): RunView => ({
    handle: {} as WorkflowHandle,
    description: {
      runId: 'run-1',
      taskQueue: 'q',
      status: { name: 'COMPLETED' },
    } as unknown as WorkflowExecutionDescription,
    ledger: { reducerVersion: 1, eventCount: events.length, events, projection: reduce(events), projectionHash: 'abc' },
    pending: [],
  });

  test('text: a table of what the stop left, from the field', () => {
    const text = showText('wf-1', view(fieldOnly()));
    expect(text).toMatch(/left standing for an operator\n {2}CALL\s+TOOL\s+STATE\s+OPERATION KEY\s+WHY/);
    expect(text).toMatch(/ {2}lc_1_a\s+wallet_debit\s+UNKNOWN\s+op_debit_600\s+outcome_unknown/);
  });

  test('text: a stop whose prose names a call but whose field is empty left nothing', () => {
    expect(showText('wf-1', view(proseOnly()))).toMatch(/\nleft standing: nothing\n/);
  });

  test('json: the field as recorded', () => {
    expect((showJson('wf-1', view(fieldOnly())) as { leftStanding: unknown }).leftStanding).toEqual([LEFT]);
    expect((showJson('wf-1', view(proseOnly())) as { leftStanding: unknown }).leftStanding).toEqual([]);
  });

  test('the RunCompleted event line carries the field', () => {
    const line = eventLine(fieldOnly().at(-1)!);
    expect(line).toMatch(/RunCompleted\s+stopReason=deadline_exceeded leftStanding=lc_1_a:UNKNOWN:outcome_unknown:/);
    expect(eventLine(proseOnly().at(-1)!)).not.toMatch(/leftStanding=/);
  });
});

test('ledgerloop list filters on the search attribute that counts leftStanding', () => {
  expect(buildListQuery({ leftStanding: true })).toBe("WorkflowType = 'agentRun' AND LedgerloopLeftStanding > 0");
  expect(buildListQuery({ leftStanding: false })).toBe("WorkflowType = 'agentRun'");
});
