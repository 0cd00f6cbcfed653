/**
 * The fast workflow tier: the call runner's paths on the time-skipping test server, with stub dispatch and
 * reconcile activities over an in-memory idempotency record (test/workflow/fake-downstream.ts). The scripted
 * model, the authorizer and identity verification are the real activities; nothing runs as a separate process.
 * The real-server tiers (test/integration) keep proving the same promises against real services.
 */
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { DISCARD_WORKFLOW_SPANS } from '../../src/observability/tracing';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { FakeDownstream, type Step } from './fake-downstream';
import { tierWorker, workflowTier } from './tier';
import { labScriptedModel } from '../../lab/scenarios';
import { DEFAULT_POLICY, Policy } from '../../src/domain/policy-format';
import { StaticPolicyStore, type PolicyStore } from '../../src/stores/policy-store';

jest.setTimeout(60_000);

const tier = workflowTier('wf');

interface Outcome {
  readonly result: AgentRunResult;
  readonly ledger: LedgerSnapshot;
  readonly authorizerCalls: number;
  /** How the authorizer was asked, from the history: scheduled activities and local-activity markers. */
  readonly authorizerAsked: { readonly activities: number; readonly localActivityMarkers: number };
}

let runs = 0;

/** One run of `scenario` on a fresh worker whose downstream is `fake`; counts the authorizer's calls. */
async function run(
  fake: FakeDownstream,
  over: Partial<AgentRunInput> & {
    scenario?: string;
    vars?: Record<string, unknown>;
    policy?: Policy;
    policies?: PolicyStore;
  } = {},
): Promise<Outcome> {
  const { scenario, vars, policy, policies, ...rest } = over;
  const taskQueue = `wf-tier-${process.pid}-${++runs}`;
  let authorizerCalls = 0;
  const worker = await tierWorker(tier, taskQueue, {
    ...(policy || policies ? { policies: policies ?? new StaticPolicyStore(policy!) } : {}),
    stubs: (real) => ({
      ...fake.activities(),
      readPolicy: (...args: Parameters<typeof real.readPolicy>) => {
        authorizerCalls += 1;
        return real.readPolicy(...args);
      },
    }),
  });
  const input: AgentRunInput = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'charge the customer',
    strategy: 'same_key_replay',
    planner: {
      kind: 'scripted',
      scenario: scenario ?? 'wallet-debit',
      vars: vars ?? { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } },
    },
    // The test server's clock, not this process's: time skipping moves it ahead between runs.
    deadlineAt: new Date((await tier.env.currentTimeMs()) + 3600_000).toISOString(),
    caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000 },
    ...rest,
  };
  return worker.runUntil(async () => {
    const handle = await startAgentRun(tier.env.client, {
      workflowId: `${taskQueue}-run`,
      taskQueue,
      input,
      identityToken: await tier.issuer.issueFor({ purpose: 'start', run: `${taskQueue}-run` }, 'user:alice', 'acme'),
    });
    const result = await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    const authorizerAsked = {
      activities: events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'readPolicy')
        .length,
      localActivityMarkers: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
        .length,
    };
    return { result, ledger: await readLedger(handle), authorizerCalls, authorizerAsked };
  });
}

const types = (o: Outcome): string[] => o.ledger.events.map((e) => e.type);
const debits = (o: Outcome) => o.result.calls.filter((c) => c.toolName === 'wallet_debit');

const always = (step: Step): Step[] => Array.from({ length: 10 }, () => step);

describe('retries, UNKNOWN and reconciliation', () => {
  test('a response lost after the commit: Temporal sends again under the same key and the downstream replays the one effect', async () => {
    const fake = new FakeDownstream(['lose']);
    const out = await run(fake);
    expect(debits(out)[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(fake.sent).toHaveLength(2);
    expect(new Set(fake.sent).size).toBe(1);
    expect(fake.effectsOf('wallet_debit')).toHaveLength(1);
    expect(types(out)).not.toContain('ToolOutcomeMarkedUnknown');
  });

  test('every response lost: the call is UNKNOWN, never FAILED; the lookup finds the effect and settles it SUCCEEDED', async () => {
    const fake = new FakeDownstream(always('lose'));
    const out = await run(fake);
    expect(out.result.stopReason).toBe('completed');
    expect(types(out)).toContain('ToolOutcomeMarkedUnknown');
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({
      via: 'receipt_lookup',
      outcome: 'SUCCEEDED',
    });
    expect(debits(out)[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(fake.lookups).toBe(1);
    expect(fake.effectsOf('wallet_debit')).toHaveLength(1);
  });

  test('a lookup that finds nothing but does not seal settles nothing: the seal is retried, then the call is UNKNOWN for an operator', async () => {
    const fake = new FakeDownstream(always('unavailable'), { refuseSeal: true });
    const out = await run(fake, { onAbort: 'leave' });
    const call = debits(out)[0]!;
    expect(out.ledger.projection.calls[call.logicalCallId]).toMatchObject({ state: 'UNKNOWN' });
    expect(types(out)).not.toContain('ToolEffectReconciled');
    expect(fake.lookups).toBeGreaterThan(1); // the seal was tried again
    expect(out.result.stopReason).toBe('outcome_unknown');
    expect(out.result.leftStanding).toEqual([
      expect.objectContaining({ logicalCallId: call.logicalCallId, state: 'UNKNOWN', why: 'left_by_choice' }),
    ]);
  });

  test('the downstream never reached: UNKNOWN all the same; the lookup finds nothing, seals the key, and the call is FAILED', async () => {
    const fake = new FakeDownstream(always('unavailable'));
    const out = await run(fake);
    expect(types(out)).toContain('ToolOutcomeMarkedUnknown');
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({ outcome: 'FAILED' });
    expect(debits(out)[0]).toMatchObject({ state: 'FAILED' });
    expect(fake.sealed.size).toBe(1);
    expect(fake.effectsOf('wallet_debit')).toHaveLength(0);
  });
});

describe('reauthorization', () => {
  test('a policy that changed under the call sends nothing, asks the authorizer, and dispatches once under the same key', async () => {
    const fake = new FakeDownstream(['stale']);
    const out = await run(fake);
    expect(out.result.stopReason).toBe('completed');
    expect(debits(out)[0]).toMatchObject({ state: 'SUCCEEDED' });
    // The first decision is made from the policy the run's opening returned; the stale one asks the authorizer,
    // as an ordinary activity: a new run has no local activity (workflows/steps/decide.ts, askAuthorizer).
    expect(out.authorizerCalls).toBe(1);
    expect(out.authorizerAsked).toEqual({ activities: 1, localActivityMarkers: 0 });
    expect(new Set(fake.sent).size).toBe(1);
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]).toBe(debits(out)[0]?.operationKey);
  });

  test('without the stale step the authorizer is never asked: the run holds its policy from its opening (the count above can fail)', async () => {
    const out = await run(new FakeDownstream());
    expect(out.authorizerCalls).toBe(0);
  });
});

/** Debits limited to one per `perMs` per run. */
const oneDebitPer = (perMs: number): Policy =>
  Policy.parse({
    ...DEFAULT_POLICY,
    version: `one-per-${perMs}/1`,
    rules: DEFAULT_POLICY.rules.map((r) =>
      r.action === 'wallet.debit' ? { ...r, rateLimit: { max: 1, perMs, per: 'run' } } : r,
    ),
  });

describe('rate limits count intents, not attempts', () => {
  test('a call decided again after its policy went stale is not held back by its own earlier intent', async () => {
    const fake = new FakeDownstream(['stale']);
    const out = await run(fake, { policy: oneDebitPer(120_000) });
    expect(out.result.stopReason).toBe('completed');
    expect(types(out)).toContain('ReauthorizationStarted');
    expect(types(out)).not.toContain('DispatchDeferred');
    expect(fake.effectsOf('wallet_debit')).toHaveLength(1);
  });

  test('the positive control: a second intent of the action in the window is held back', async () => {
    const fake = new FakeDownstream();
    const out = await run(fake, {
      policy: oneDebitPer(120_000),
      scenario: 'parallel-debits',
      vars: { account: 'acct_1', count: 2 },
    });
    expect(types(out).filter((t) => t === 'DispatchDeferred')).toHaveLength(1);
    expect(fake.effectsOf('wallet_debit')).toHaveLength(2);
  });

  test('the per-run window survives continue-as-new: the continued run holds back its first debit', async () => {
    const fake = new FakeDownstream();
    const out = await run(fake, {
      policy: oneDebitPer(600_000),
      scenario: 'endless-debits',
      vars: { account: 'acct_1' },
      budgets: { maxTurns: 3, maxToolCalls: 16, maxHistoryEvents: 30 },
      onAbort: 'leave',
    });
    const events = out.ledger.events;
    expect(events[0]?.type).toBe('LedgerCarriedForward');
    const firstDeferred = events.findIndex((e) => e.type === 'DispatchDeferred');
    const firstIntent = events.findIndex((e) => e.type === 'DispatchIntentRecorded');
    expect(firstDeferred).toBeGreaterThanOrEqual(0);
    expect(firstDeferred).toBeLessThan(firstIntent);
  });
});

describe('a decision taken again after a possible send never settles the call by itself', () => {
  /** The default policy at the run's opening; from the next read on, one that denies every debit. */
  const turningAgainstDebits = (): PolicyStore => {
    let reads = 0;
    const denying = Policy.parse({
      ...DEFAULT_POLICY,
      version: 'no-debits/1',
      rules: DEFAULT_POLICY.rules.filter((r) => r.action !== 'wallet.debit'),
    });
    return { current: () => (++reads === 1 ? DEFAULT_POLICY : denying) };
  };

  test('committed, response lost, the retry refused as stale, the new decision denies: the lookup finds the effect, SUCCEEDED', async () => {
    const fake = new FakeDownstream(['lose', 'stale']);
    const out = await run(fake, { policies: turningAgainstDebits() });
    const call = out.ledger.projection.calls[debits(out)[0]!.logicalCallId]!;
    expect(types(out)).toEqual(expect.arrayContaining(['ReauthorizationStarted', 'AuthorizationDenied']));
    expect(call).toMatchObject({ state: 'SUCCEEDED', reconciledVia: 'receipt_lookup' });
    expect(fake.effectsOf('wallet_debit')).toHaveLength(1);
  });

  test('the control: nothing committed before the stale refusal, the same denial ends the call FAILED on a sealed key', async () => {
    const fake = new FakeDownstream(['stale']);
    const out = await run(fake, { policies: turningAgainstDebits() });
    const call = out.ledger.projection.calls[debits(out)[0]!.logicalCallId]!;
    expect(call.state).toBe('FAILED');
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({
      outcome: 'FAILED',
      evidence: expect.objectContaining({ lookup: 'sealed' }),
    });
    expect(fake.effectsOf('wallet_debit')).toHaveLength(0);
  });
});

describe('budgets and compensation', () => {
  test('a run stopped by its turn budget offsets each standing debit with a governed refund (onAbort: compensate)', async () => {
    const fake = new FakeDownstream();
    const out = await run(fake, {
      scenario: 'endless-debits',
      vars: { account: 'acct_1' },
      budgets: { maxTurns: 2, maxToolCalls: 16 },
    });
    expect(out.result.stopReason).toBe('budget_exhausted');
    expect(fake.effectsOf('wallet_debit')).toHaveLength(2);
    expect(fake.effectsOf('wallet_refund')).toHaveLength(2);
    for (const c of Object.values(out.ledger.projection.calls).filter((c) => c.origin === 'model'))
      expect(c.compensation).toBe('OFFSET');
    expect(out.ledger.events.find((e) => e.type === 'StandingEffectsSettled')).toMatchObject({
      choice: 'compensate',
      stopReason: 'budget_exhausted',
      left: [],
    });
  });

  test("onAbort: 'leave' offsets nothing (the refunds above come from the choice, not from the budget)", async () => {
    const fake = new FakeDownstream();
    const out = await run(fake, {
      scenario: 'endless-debits',
      vars: { account: 'acct_1' },
      onAbort: 'leave',
      budgets: { maxTurns: 2, maxToolCalls: 16 },
    });
    expect(out.result.stopReason).toBe('budget_exhausted');
    expect(fake.effectsOf('wallet_debit')).toHaveLength(2);
    expect(fake.effectsOf('wallet_refund')).toHaveLength(0);
  });

  test('four debits side by side on a tool-call budget of two: two effects, two typed rejections', async () => {
    const fake = new FakeDownstream();
    const out = await run(fake, {
      scenario: 'parallel-debits',
      vars: { account: 'acct_1', count: 4 },
      budgets: { maxToolCalls: 2 },
    });
    expect(fake.effectsOf('wallet_debit')).toHaveLength(2);
    expect(
      out.ledger.events.filter((e) => e.type === 'ProposalRejected' && 'code' in e && e.code === 'Budget.ToolCalls'),
    ).toHaveLength(2);
  });

  test('a downstream rejection is FAILED with its typed code after one attempt, and nothing is charged', async () => {
    const fake = new FakeDownstream(['reject']);
    const out = await run(fake);
    expect(debits(out)[0]).toMatchObject({ state: 'FAILED' });
    expect(fake.sent).toHaveLength(1);
    expect(fake.effectsOf('wallet_debit')).toHaveLength(0);
    expect(types(out)).not.toContain('ToolOutcomeMarkedUnknown');
  });
});

describe('absurd input', () => {
  /** Start agentRun with `args` as a raw client would (no client-side checks), and see how it ends. */
  async function startRaw(args: unknown): Promise<{ failure: unknown; taskFailures: number }> {
    const taskQueue = `wf-tier-raw-${process.pid}-${++runs}`;
    const worker = await Worker.create({
      connection: tier.env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: tier.bundlePath },
      activities: createActivities({ models: [labScriptedModel()], services: {}, workerIdentity: 'wf-tier' }),
      sinks: DISCARD_WORKFLOW_SPANS,
    });
    return worker.runUntil(async () => {
      const handle = await tier.env.client.workflow.start('agentRun', {
        workflowId: `${taskQueue}-run`,
        taskQueue,
        args: [args],
        workflowExecutionTimeout: '2 minutes',
      });
      const failure = await handle.result().then(
        () => undefined,
        (err: unknown) => (err as { cause?: unknown }).cause,
      );
      const history = await handle.fetchHistory();
      const taskFailures = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
      return { failure, taskFailures };
    });
  }

  const valid = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'charge the customer',
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario: 'wallet-debit', vars: {} },
    deadlineAt: '2099-01-01T00:00:00.000Z',
  };

  test.each([
    { name: 'no input at all', args: undefined, field: 'at input' },
    { name: 'a number', args: 42, field: 'at input' },
    { name: 'no principal', args: { ...valid, principal: undefined }, field: 'at principal' },
    {
      name: 'a principal without a tenant',
      args: { ...valid, principal: { id: 'user:alice' } },
      field: 'principal.tenant',
    },
    { name: 'an unknown strategy', args: { ...valid, strategy: 'try_harder' }, field: 'at strategy' },
    { name: 'a deadline that is not a time', args: { ...valid, deadlineAt: 'tomorrow-ish' }, field: 'at deadlineAt' },
    { name: 'a planner that names no kind', args: { ...valid, planner: { scenario: 'x' } }, field: 'planner.kind' },
    {
      name: 'a budget that is not a number',
      args: { ...valid, budgets: { maxTurns: 'many' } },
      field: 'budgets.maxTurns',
    },
  ])(
    '$name: the run fails with Run.InputInvalid naming the field, and no workflow task fails',
    async ({ args, field }) => {
      const out = await startRaw(args);
      expect(out.failure).toMatchObject({ type: 'Run.InputInvalid' });
      expect((out.failure as { message: string }).message).toContain(field);
      expect(out.taskFailures).toBe(0);
    },
  );
});
