/**
 * Settlement by construction: a throw at any await of a call's path after its first send leaves every call
 * settled. On the time-skipping test server, a bundle with one more workflow interceptor
 * (inject-throw.interceptors.ts) throws `DeadlineTooClose` or a cancellation at the n-th activity or timer the run
 * schedules after its first dispatch, for n = 0, 1, 2, ... until a run schedules fewer. Each run must end with a
 * typed stop and no workflow task failure, and every call must be SUCCEEDED with its effect found, FAILED on
 * evidence (an answer, or a seal the downstream confirmed), or UNKNOWN and named in what the stop left standing;
 * and what the ledger says must agree with what the downstream holds.
 *
 * The positive control: the same checks over a ledger whose call a decision alone settled FAILED after it may have
 * sent (the hole this closes) report it.
 */
import path from 'node:path';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { LedgerEvent } from '../../src/domain/ledger-events';
import { isSettled } from '../../src/domain/lifecycle';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { DEFAULT_POLICY, Policy } from '../../src/domain/policy-format';
import { StaticPolicyStore } from '../../src/stores/policy-store';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { FakeDownstream, type Step } from './fake-downstream';
import { tierWorker, workflowTier } from './tier';

jest.setTimeout(600_000);

const tier = workflowTier('ways-out', {
  interceptorModules: [path.join(__dirname, 'inject-throw.interceptors.ts')],
});

/** Debits are limited to one per minute per run: a second debit of the same turn waits on a timer. */
const RATE_LIMITED = Policy.parse({
  ...DEFAULT_POLICY,
  version: 'ways-out/1',
  rules: DEFAULT_POLICY.rules.map((r) =>
    r.action === 'wallet.debit' ? { ...r, rateLimit: { max: 1, perMs: 60_000, per: 'run' } } : r,
  ),
});

interface Scenario {
  readonly name: string;
  readonly steps: readonly Step[];
  readonly policy: Policy;
  readonly over: Partial<AgentRunInput>;
}

const lose = (n: number): Step[] => Array.from({ length: n }, () => 'lose');

const SCENARIOS: readonly Scenario[] = [
  // Every response lost: dispatch, its lookup, the next turn.
  { name: 'every response lost', steps: lose(10), policy: DEFAULT_POLICY, over: {} },
  // A policy changed under the call: dispatch, the authorizer, dispatch again.
  { name: 'a stale policy', steps: ['stale'], policy: DEFAULT_POLICY, over: {} },
  // Two debits, the second held back by the rate limit: a dispatch, a rate-limit timer, a second dispatch.
  {
    name: 'a rate-limited second debit, the first response lost',
    steps: ['lose', 'lose', 'lose'],
    policy: RATE_LIMITED,
    over: { planner: { kind: 'scripted', scenario: 'parallel-debits', vars: { account: 'acct_1', count: 2 } } },
  },
];

let runs = 0;

async function runWith(
  s: Scenario,
  inject: { readonly at: number; readonly kind: 'deadline' | 'cancel' },
): Promise<{
  result: AgentRunResult;
  ledger: LedgerSnapshot;
  fake: FakeDownstream;
  schedules: number;
  taskFailures: number;
}> {
  const fake = new FakeDownstream(s.steps);
  const taskQueue = `ways-out-${process.pid}-${++runs}`;
  const worker = await tierWorker(tier, taskQueue, {
    workerIdentity: 'ways-out',
    policies: new StaticPolicyStore(s.policy),
    stubs: () => fake.activities(),
  });
  const input: AgentRunInput = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'charge the customer',
    strategy: 'same_key_replay',
    planner: {
      kind: 'scripted',
      scenario: 'wallet-debit',
      vars: { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } },
    },
    deadlineAt: new Date((await tier.env.currentTimeMs()) + 3600_000).toISOString(),
    caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000 },
    ...s.over,
  };
  return worker.runUntil(async () => {
    const handle = await startAgentRun(tier.env.client, {
      workflowId: `${taskQueue}-run`,
      taskQueue,
      input,
      identityToken: await tier.issuer.issueFor({ purpose: 'start', run: `${taskQueue}-run` }, 'user:alice', 'acme'),
      memo: { injectThrow: inject },
    });
    const result = await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    const first = events.findIndex(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dispatchTool',
    );
    // (Used only for the run without an injection: an injected throw can unschedule the first dispatch itself.)
    const schedules =
      first < 0
        ? 0
        : events.slice(first).filter((e) => e.activityTaskScheduledEventAttributes || e.timerStartedEventAttributes)
            .length;
    const taskFailures = events.filter((e) => e.workflowTaskFailedEventAttributes).length;
    return { result, ledger: await readLedger(handle), fake, schedules, taskFailures };
  });
}

/** How each call ended, by the events that settled it. */
function settlementProblems(ledger: LedgerSnapshot, holds: (key: string) => boolean): string[] {
  const problems: string[] = [];
  const p = ledger.projection;
  const stop = ledger.events.find(
    (e): e is Extract<LedgerEvent, { type: 'RunCompleted' }> => e.type === 'RunCompleted',
  );
  const left = new Set(stop?.leftStanding.map((l) => l.logicalCallId) ?? []);
  for (const c of Object.values(p.calls)) {
    const id = c.logicalCallId;
    if (!isSettled(c.state) && c.state !== 'UNKNOWN') problems.push(`${id} left ${c.state}`);
    const key = c.operationKey ?? '';
    if (c.state === 'FAILED' && c.dispatches > 0) {
      const last = [...ledger.events]
        .reverse()
        .find((e) => (e.type === 'ToolResultRecorded' || e.type === 'ToolEffectReconciled') && e.logicalCallId === id);
      const evidence =
        last?.type === 'ToolResultRecorded' ||
        (last?.type === 'ToolEffectReconciled' &&
          (last.evidence?.lookup === 'sealed' ||
            (last.evidence?.lookup === 'found' && last.evidence.status === 'failed')));
      if (!evidence) problems.push(`${id} is FAILED after a send without evidence`);
      if (holds(key)) problems.push(`${id} is FAILED while the downstream holds its effect`);
    }
    if (c.state === 'SUCCEEDED' && c.origin === 'model' && !holds(key))
      problems.push(`${id} SUCCEEDED without an effect`);
    const standing =
      c.origin === 'model' && (c.state === 'UNKNOWN' || (c.state === 'SUCCEEDED' && c.compensation !== 'OFFSET'));
    if (stop && stop.stopReason !== 'completed' && standing && !left.has(id))
      problems.push(`${id} stands (${c.state}) but the stop does not name it`);
  }
  return problems;
}

describe('a throw at any await after the first send leaves every call settled', () => {
  for (const scenario of SCENARIOS) {
    for (const kind of ['deadline', 'cancel'] as const) {
      test(`${scenario.name}: ${kind === 'deadline' ? 'DeadlineTooClose' : 'a cancellation'} at each await`, async () => {
        // The awaits of the path: a run without an injection, counted from its first dispatch.
        const baseline = await runWith(scenario, { at: -1, kind });
        expect(baseline.schedules).toBeGreaterThan(1);
        const seen: string[] = [];
        for (let at = 0; at < baseline.schedules; at++) {
          const out = await runWith(scenario, { at, kind });
          const holds = (key: string) => out.fake.effects.has(key);
          expect({ at, taskFailures: out.taskFailures }).toEqual({ at, taskFailures: 0 });
          expect({ at, problems: settlementProblems(out.ledger, holds) }).toEqual({ at, problems: [] });
          expect({ at, violations: out.ledger.projection.violations }).toEqual({ at, violations: [] });
          seen.push(`${at}:${out.result.stopReason}`);
        }
        // The throws changed how runs ended: the injection fired (a run it never reached ends as the baseline).
        expect(seen.some((s) => !s.endsWith(`:${baseline.result.stopReason}`))).toBe(true);
      });
    }
  }
});

describe('the checks above can fail', () => {
  test('a call a decision settled FAILED after it may have sent, while the downstream holds its effect, is reported', () => {
    const at = '2030-01-01T00:00:00.000Z';
    const ev = (seq: number, body: Record<string, unknown>) => ({ ...body, seq, at }) as unknown as LedgerEvent;
    const call = {
      logicalCallId: 'lc_1_a',
      toolName: 'wallet_debit',
      state: 'FAILED',
      operationKey: 'op_a',
      dispatches: 1,
      origin: 'model',
      compensation: null,
    };
    const ledger = {
      events: [
        ev(1, { type: 'ToolAttemptStarted', logicalCallId: 'lc_1_a', dispatch: 1, keyUsed: 'op_a' }),
        ev(2, { type: 'ApprovalDenied', logicalCallId: 'lc_1_a', approver: 'x', reason: 'no' }),
        ev(3, { type: 'RunCompleted', stopReason: 'tool_failed', detail: '', leftStanding: [] }),
      ],
      projection: { calls: { lc_1_a: call } },
    } as unknown as LedgerSnapshot;
    expect(settlementProblems(ledger, (k) => k === 'op_a')).toEqual([
      'lc_1_a is FAILED after a send without evidence',
      'lc_1_a is FAILED while the downstream holds its effect',
    ]);
    expect(settlementProblems(ledger, () => false)).toEqual(['lc_1_a is FAILED after a send without evidence']);
  });
});
