/**
 * Nothing a caller does interrupts the saga. On the time-skipping test server, with stub dispatch and reconcile
 * activities: two debits succeed, the wallet refuses the third, so the failure saga refunds the second, then the first. A
 * cancel (the verified `requestCancel` update, or Temporal's own cancel of the workflow) lands at every point from
 * the refused debit's dispatch on: inside the n-th dispatch or lookup activity, before it acts or after it acted and
 * before it answers, for n = 0, 1, ... until a run has fewer. Each run must leave every registered compensation
 * dispatched once (its activity never cancelled, its key never sealed), committed and settled OFFSET, and its stop
 * must name the cancel: `operator_stopped`, a `CancellationRequested` event, and nothing left standing.
 *
 * The positive control: the same checks over the ledger today's main left in the issue's run (the refund's key
 * sealed, the release never sent, the cancel recorded nowhere) report each of those.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import type { LedgerEvent } from '../../src/domain/ledger-events';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { requestCancelUpdate } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { FakeDownstream, type Step } from './fake-downstream';
import { tierWorker, workflowTier } from './tier';

jest.setTimeout(600_000);

const { WorkflowTaskFailedCause } = temporal.api.enums.v1;

const tier = workflowTier('saga-cancel');

type CancelKind = 'verified' | 'temporal';
/** Where the cancel lands: inside the n-th dispatch or lookup from the refused debit's on, before or after it acts. */
interface Point {
  readonly at: number;
  readonly phase: 'before' | 'after';
  readonly kind: CancelKind;
}

/** Two debits succeed; the wallet refuses the third (100, 101, 102 minor units), so the saga refunds 101, then 100. */
const DEBITS_BEFORE_THE_REFUSAL = 2;
/** Attempts per compensation (`limits.compensation`): few, so that a compensation all of whose answers are lost is quick. */
const COMPENSATION_ATTEMPTS = 2;
const refusesThirdDebit = (req: DispatchRequest): boolean =>
  req.intent.toolName === 'wallet_debit' && (req.body as { amount?: { minor?: number } }).amount?.minor === 102;

const SCRIPTS: readonly { readonly name: string; readonly steps: readonly Step[] }[] = [
  { name: 'every compensation answered', steps: [] },
  // The first refund's two attempts (the run's limit) both lose their response: its lookup settles it.
  { name: 'the first compensation answered only by its lookup', steps: ['ok', 'ok', ...lose(COMPENSATION_ATTEMPTS)] },
];

function lose(n: number): Step[] {
  return Array.from({ length: n }, () => 'lose');
}

let runs = 0;

interface Outcome {
  readonly result: AgentRunResult;
  readonly ledger: LedgerSnapshot;
  readonly fake: FakeDownstream;
  /** Dispatch and lookup activities run from the refused debit's dispatch on. */
  readonly points: number;
  /** Whether the cancel was sent, and accepted (the update) or processed by the workflow (Temporal's cancel). */
  readonly cancelled: boolean;
  /** Workflow task failures in the history, each as its cause and message. */
  readonly taskFailures: readonly string[];
}

async function runWith(steps: readonly Step[], point: Point | undefined): Promise<Outcome> {
  const fake = new FakeDownstream(steps, { refuses: refusesThirdDebit });
  const taskQueue = `saga-cancel-${process.pid}-${++runs}`;
  const workflowId = `${taskQueue}-run`;
  let handle: WorkflowHandle | undefined;
  let seen = 0;
  let cancelled = false;
  const cancelNow = async (): Promise<void> => {
    if (point?.kind === 'verified') {
      const token = await tier.issuer.issueFor({ purpose: 'cancel', run: workflowId }, 'user:alice', 'acme');
      await handle!.executeUpdate(requestCancelUpdate, { args: [{ token, reason: 'cancel during the saga' }] });
    } else {
      await handle!.cancel();
      await processedCancel(handle!);
    }
    cancelled = true;
  };
  // Counts every dispatch and lookup; the planned one cancels the run before it acts, or after it acted.
  const around =
    <A, R>(fn: (a: A) => Promise<R>) =>
    async (a: A): Promise<R> => {
      const mine = seen++ - DEBITS_BEFORE_THE_REFUSAL;
      const here = point !== undefined && mine === point.at;
      if (here && point.phase === 'before') await cancelNow();
      try {
        return await fn(a);
      } finally {
        if (here && point.phase === 'after') await cancelNow();
      }
    };
  const worker = await tierWorker(tier, taskQueue, {
    workerIdentity: 'saga-cancel',
    stubs: () => {
      const stub = fake.activities();
      return { dispatchTool: around(stub.dispatchTool), reconcileCall: around(stub.reconcileCall) };
    },
  });
  const input: AgentRunInput = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'charge the customer three times',
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario: 'n-debits', vars: { account: 'acct_1', turns: 3 } },
    deadlineAt: new Date((await tier.env.currentTimeMs()) + 3600_000).toISOString(),
    caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000 },
    limits: { compensation: COMPENSATION_ATTEMPTS },
  };
  return worker.runUntil(async () => {
    handle = await startAgentRun(tier.env.client, {
      workflowId,
      taskQueue,
      input,
      identityToken: await tier.issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    const result = await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    return {
      result,
      ledger: await readLedger(handle),
      fake,
      points: seen - DEBITS_BEFORE_THE_REFUSAL,
      cancelled,
      // A completion that closes the run while a new event arrived (the late completion of an activity the cancel
      // abandoned, still held here) is refused by the server as UNHANDLED_COMMAND, and the task runs again with that
      // event: the server's ordering, not a failure of the workflow's code.
      taskFailures: events.flatMap((e) => {
        const f = e.workflowTaskFailedEventAttributes;
        if (!f || f.cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND) return [];
        return [`workflow task failed: ${String(f.cause)} ${f.failure?.message ?? ''}`];
      }),
    };
  });
}

/** Waits until the workflow has completed a task after Temporal's cancel request reached its history. */
async function processedCancel(handle: WorkflowHandle): Promise<void> {
  for (;;) {
    const events = (await handle.fetchHistory()).events ?? [];
    const asked = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
    if (asked >= 0 && events.slice(asked).some((e) => e.workflowTaskCompletedEventAttributes)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ofType = <T extends LedgerEvent['type']>(l: LedgerSnapshot, type: T) =>
  l.events.filter((e): e is Extract<LedgerEvent, { type: T }> => e.type === type);

/**
 * What a cancel must not do to the saga, and what the stop must say: each problem one line. `kind` is the cancel
 * the run met (a verified one names who asked).
 */
function sagaProblems(
  ledger: LedgerSnapshot,
  result: Pick<AgentRunResult, 'stopReason' | 'detail' | 'leftStanding'>,
  fake: Pick<FakeDownstream, 'effects' | 'sealed'>,
  kind: CancelKind,
): string[] {
  const problems: string[] = [];
  const calls = ledger.projection.calls;
  for (const reg of ofType(ledger, 'CompensationRegistered')) {
    if (calls[reg.forwardCallId]?.state !== 'SUCCEEDED') continue;
    const cmp = calls[reg.compensationCallId];
    const name = `${reg.toolName} of ${reg.forwardCallId}`;
    if (cmp === undefined) {
      problems.push(`${name} was never dispatched`);
      continue;
    }
    if (cmp.dispatches !== 1) problems.push(`${name} was dispatched ${cmp.dispatches} times`);
    if (cmp.state !== 'SUCCEEDED') problems.push(`${name} is ${cmp.state}`);
    if (calls[reg.forwardCallId]?.compensation !== 'OFFSET') problems.push(`${name} did not offset its debit`);
    if (fake.sealed.has(reg.operationKey)) problems.push(`${name}'s key was sealed`);
    if (!fake.effects.has(reg.operationKey)) problems.push(`${name} took no effect`);
  }
  const asked = ofType(ledger, 'CancellationRequested');
  if (asked.length !== 1) problems.push(`the cancel is recorded ${asked.length} times`);
  if (kind === 'verified' && asked[0] !== undefined && asked[0].requestedBy?.principalId !== 'user:alice')
    problems.push('the recorded cancel does not name who asked');
  if (result.stopReason !== 'operator_stopped') problems.push(`the stop is ${result.stopReason}`);
  if (!result.detail.startsWith('cancelled by request')) problems.push(`the stop's detail does not name the cancel`);
  if (result.leftStanding.length > 0) problems.push(`the stop leaves ${result.leftStanding.length} effect(s)`);
  return problems;
}

describe('a cancel at any point of the saga leaves every compensation dispatched once and settled', () => {
  for (const script of SCRIPTS) {
    test(`${script.name}: the baseline run compensates both debits and stops tool_failed`, async () => {
      const out = await runWith(script.steps, undefined);
      expect(out.result.stopReason).toBe('tool_failed');
      expect(ofType(out.ledger, 'CompensationCompleted').map((e) => e.outcome)).toEqual(['OFFSET', 'OFFSET']);
      expect(out.result.detail).toMatch(/offset lc_\S+ \(wallet_debit\), lc_\S+ \(wallet_debit\)/);
    });
    for (const kind of ['verified', 'temporal'] as const) {
      test(`${script.name}: ${kind === 'verified' ? 'the verified requestCancel' : "Temporal's cancel"} at each point`, async () => {
        const baseline = await runWith(script.steps, undefined);
        // The refused debit, then at least one dispatch of each refund.
        expect(baseline.points).toBeGreaterThanOrEqual(3);
        const stops: string[] = [];
        // Every point is run before anything is asserted, so a failure lists every point that broke.
        const broken: { readonly where: string; readonly problems: readonly string[] }[] = [];
        for (let at = 0; at < baseline.points; at++) {
          for (const phase of ['before', 'after'] as const) {
            const out = await runWith(script.steps, { at, phase, kind });
            const problems = [
              ...(out.cancelled ? [] : ['the cancel was never sent']),
              ...out.taskFailures,
              ...sagaProblems(out.ledger, out.result, out.fake, kind),
              ...out.ledger.projection.violations.map((v) => `reducer violation: ${v}`),
            ];
            if (problems.length > 0) broken.push({ where: `${phase} activity ${at}`, problems });
            stops.push(out.result.detail);
          }
        }
        expect(broken).toEqual([]);
        expect(stops.some((d) => d.includes('honoured at the stop (tool_failed'))).toBe(true);
      });
    }
  }
});

describe('the checks above can fail', () => {
  test("the issue's run on main (a compensation sealed, the next never sent, the cancel recorded nowhere) is reported", () => {
    const at = '2030-01-01T00:00:00.000Z';
    const ev = (seq: number, body: Record<string, unknown>) => ({ ...body, seq, at }) as unknown as LedgerEvent;
    const debit = (id: string, compensation: string | null) => ({
      logicalCallId: id,
      toolName: 'wallet_debit',
      state: 'SUCCEEDED',
      dispatches: 1,
      origin: 'model',
      compensation,
    });
    const ledger = {
      events: [
        ev(1, { type: 'CompensationRegistered', forwardCallId: 'lc_1', compensationCallId: 'cmp_lc_1' }),
        ev(2, { type: 'CompensationRegistered', forwardCallId: 'lc_2', compensationCallId: 'cmp_lc_2' }),
      ].map((e, i) => ({ ...e, toolName: 'wallet_refund', operationKey: `op_r${i + 1}` })),
      projection: {
        calls: {
          lc_1: debit('lc_1', null),
          lc_2: debit('lc_2', 'FAILED'),
          cmp_lc_2: { logicalCallId: 'cmp_lc_2', state: 'FAILED', dispatches: 1, origin: 'compensation' },
        },
      },
    } as unknown as LedgerSnapshot;
    const left = {
      logicalCallId: 'lc_1',
      toolName: 'wallet_debit',
      operationKey: 'op_d1',
      state: 'SUCCEEDED' as const,
    };
    const result = {
      stopReason: 'compensation_failed' as const,
      detail: 'wallet_debit refused',
      leftStanding: [{ ...left, why: 'compensation_unsettled' as const }],
    };
    const fake = { effects: new Map(), sealed: new Set(['op_r2']) } as unknown as FakeDownstream;
    expect(sagaProblems(ledger, result, fake, 'verified')).toEqual([
      'wallet_refund of lc_1 was never dispatched',
      'wallet_refund of lc_2 is FAILED',
      'wallet_refund of lc_2 did not offset its debit',
      "wallet_refund of lc_2's key was sealed",
      'wallet_refund of lc_2 took no effect',
      'the cancel is recorded 0 times',
      'the stop is compensation_failed',
      "the stop's detail does not name the cancel",
      'the stop leaves 1 effect(s)',
    ]);
  });
});
