/**
 * Issue #39, hole 3: one model proposal wedged a run. The scripted model proposes arguments nested tens of thousands
 * deep; before the fix every workflow task of the run failed with `RangeError: Maximum call stack size exceeded`,
 * on every retry, until someone terminated it. Each case here reads the history for failed workflow tasks, and
 * shows the refusal is typed and read by the model as an observation; the control beside them is the same run with
 * a normal proposal, which dispatches. The last cases are the answer's side: a result, or the whole answer of a
 * downstream, nested too deep.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createDispatchActivities } from '../../activities/dispatch.activities';
import { startAgentRun } from '../../host/client/runs';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { Failure } from '../../src/domain/failures';
import { MAX_JSON_DEPTH, shallowOrMarker } from '../../src/domain/json-depth';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import type { DownstreamClient } from '../../src/downstream/client';
import { ledgerQuery } from '../../workflows/definitions';
import { FakeDownstream } from './fake-downstream';
import { tierWorker, workflowTier } from './tier';

jest.setTimeout(120_000);

const tier = workflowTier('deep-proposal');
const EventType = temporal.api.enums.v1.EventType;

/** The run's end, or the first failed workflow task: whichever the history shows first (bounded by `ms`). */
async function closedOrWedged(
  handle: WorkflowHandle,
  ms = 60_000,
): Promise<{ failedTasks: string[]; closed: boolean }> {
  const closing = new Set<number>([
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
  ]);
  for (const end = Date.now() + ms; ;) {
    const events = (await handle.fetchHistory()).events ?? [];
    const failedTasks = events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
      .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '?');
    const closed = events.some((e) => closing.has(e.eventType ?? 0));
    if (failedTasks.length > 0 || closed || Date.now() > end) return { failedTasks, closed };
    await new Promise((r) => setTimeout(r, 100));
  }
}

let runs = 0;

/** `depth` arrays nested in one another. */
function nested(depth: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

/** `depth` objects nested in one another (an API result's shape), the innermost a leaf. */
function objectsNested(depth: number): unknown {
  let v: unknown = { leaf: true };
  for (let i = 1; i < depth; i++) v = { n: v };
  return v;
}

/** What the run's dispatch answers: the fake's body with extra fields, another body, or other activities. */
interface Answer {
  /** What the downstream's answer carries beside its own body (a hostile downstream). */
  readonly extraBody?: Record<string, unknown>;
  /** What the dispatch activity answers instead of the downstream's body (the depth guard's marker). */
  readonly replaceBody?: unknown;
  /** The dispatch and reconcile activities themselves (the real ones, over a client the test gives). */
  readonly activities?: ReturnType<FakeDownstream['activities']>;
}

async function run(vars: Record<string, unknown>, scenario = 'deep-arguments', answer: Answer = {}) {
  const { extraBody, replaceBody } = answer;
  const taskQueue = `deep-proposal-${process.pid}-${++runs}`;
  const fake = new FakeDownstream();
  const stubs = () => {
    const a = answer.activities ?? fake.activities();
    if (extraBody === undefined && replaceBody === undefined) return a;
    return {
      ...a,
      dispatchTool: async (req: DispatchRequest) => {
        const res = await a.dispatchTool(req);
        return { ...res, body: replaceBody ?? { ...(res.body as object), ...extraBody } };
      },
    };
  };
  const worker = await tierWorker(tier, taskQueue, { stubs });
  const workflowId = `${taskQueue}-run`;
  const input: AgentRunInput = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'charge the customer',
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario, vars },
    deadlineAt: new Date((await tier.env.currentTimeMs()) + 3600_000).toISOString(),
  };
  return worker.runUntil(async () => {
    const handle = await startAgentRun(tier.env.client, {
      workflowId,
      taskQueue,
      input,
      identityToken: await tier.issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    const seen = await closedOrWedged(handle);
    if (!seen.closed) await handle.terminate('the test ends a wedged run');
    const result: AgentRunResult | undefined = seen.closed ? await handle.result() : undefined;
    const events = seen.closed ? (await handle.query(ledgerQuery)).events : [];
    const history = (await handle.fetchHistory()).events ?? [];
    const failedAttempts = history.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED).length;
    return { ...seen, result, fake, events, failedAttempts };
  });
}

describe('a proposal nested too deep is refused, typed, and the run goes on', () => {
  test("the issue's case: wallet_debit nested 60,000 deep (120 KB) fails no workflow task and is refused", async () => {
    const out = await run({ tool: 'wallet_debit', depth: 60_000 });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.stopReason).toBe('completed');
    // Over the tool's 4 KB argument limit: the size check refuses it before anything reads its nesting.
    expect(out.result?.calls.map((c) => c.state)).toEqual(['FAILED']);
    expect(out.result?.finalText).toBe(`Stopped: wallet_debit: FAILED ${Failure.ProposalTooLarge}.`);
    expect(out.fake.sent).toEqual([]);
  });

  test('an unknown tool proposed with arguments nested 30,000 deep is refused Proposal.TooDeep', async () => {
    const out = await run({ tool: 'no_such_tool', depth: 30_000 });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.stopReason).toBe('completed');
    expect(out.result?.calls.map((c) => c.state)).toEqual(['FAILED']);
    expect(out.result?.finalText).toBe(`Stopped: no_such_tool: FAILED ${Failure.ProposalTooDeep}.`);
  });

  test('wallet_debit nested 2,000 deep (4 KB, within its size limit) is refused Proposal.TooDeep', async () => {
    const out = await run({ tool: 'wallet_debit', depth: 2_000 });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.finalText).toBe(`Stopped: wallet_debit: FAILED ${Failure.ProposalTooDeep}.`);
    expect(out.fake.sent).toEqual([]);
  });

  test('arguments exactly MAX_JSON_DEPTH (64) deep pass the depth check and fail no workflow task', async () => {
    const out = await run({ tool: 'no_such_tool', depth: MAX_JSON_DEPTH });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.finalText).toBe(`Stopped: no_such_tool: FAILED ${Failure.ProposalUnknownTool}.`);
  });

  test('a result nested too deep is refused Result.Invalid as untrusted data: the effect stands, no task fails', async () => {
    const debit = { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } };
    const out = await run(debit, 'wallet-debit', { extraBody: { extra: nested(3_000) } });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    expect(out.fake.effectsOf('wallet_debit')).toHaveLength(1);
    const recorded = out.events.find((e) => e.type === 'ToolResultRecorded');
    expect(recorded).toMatchObject({ state: 'SUCCEEDED', errorCode: Failure.ResultInvalid });
    expect(recorded).not.toHaveProperty('resultHash');
    // the control: the same extra field, shallow, is admitted (the result schema strips what it does not name)
    const shallow = await run(debit, 'wallet-debit', { extraBody: { extra: nested(3) } });
    expect(shallow.failedTasks).toEqual([]);
    const admitted = shallow.events.find((e) => e.type === 'ToolResultRecorded');
    expect(admitted).toMatchObject({ state: 'SUCCEEDED', resultHash: expect.any(String) });
    expect(admitted).not.toHaveProperty('errorCode');
  });

  test("the activity's depth marker (an answer too deep to encode) settles SUCCEEDED Result.Invalid, unhashed", async () => {
    const debit = { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } };
    const out = await run(debit, 'wallet-debit', { replaceBody: shallowOrMarker(nested(10_000)) });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    expect(out.fake.effectsOf('wallet_debit')).toHaveLength(1);
    expect(out.fake.sent).toHaveLength(1);
    const recorded = out.events.find((e) => e.type === 'ToolResultRecorded');
    expect(recorded).toMatchObject({ state: 'SUCCEEDED', errorCode: Failure.ResultInvalid, attempts: 1 });
    // the marker is no result: no hash of it stands in the ledger for the effect's answer
    expect(recorded).not.toHaveProperty('resultHash');
  });

  test('the control: a normal wallet_debit in the same run shape dispatches and succeeds', async () => {
    const out = await run({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } }, 'wallet-debit');
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    expect(out.fake.effectsOf('wallet_debit')).toHaveLength(1);
  });
});

/**
 * The gap after hole 3, with the real dispatch and reconcile activities: a wallet on Ledgerloop's HTTP contract that
 * commits once per key, counts every request, and answers (and looks up) with `extra` in its body. Before the depth
 * guard an answer 10,000 deep could not be encoded (the payload converter's `JSON.stringify` overflowed), so every
 * attempt failed retryably after the effect: resends, a lookup failing the same way, the call UNKNOWN and its
 * compensation sent (a second effect).
 */
function deepWallet(extra: unknown) {
  const effects = new Set<string>();
  let requests = 0;
  const result = (key: string) => ({
    receipt: `rcpt_${key.slice(-6)}`,
    tenant: 'acme',
    account: 'acct_1',
    amount: { minor: 1250, currency: 'EUR' },
    balanceAfter: { minor: 0, currency: 'EUR' },
    extra,
  });
  const client = {
    async send(_path: string, _body: unknown, options: { key: string }) {
      requests++;
      const replayed = effects.has(options.key);
      effects.add(options.key);
      return { kind: 'ok', status: 201, body: result(options.key), replayed };
    },
    async lookup(key: string) {
      return effects.has(key)
        ? { kind: 'found', record: { operationKey: key, status: 'completed', receipt: 'r', result: result(key) } }
        : { kind: 'not_found', sealed: false };
    },
    async contract() {
      return { idempotencyRetentionMs: 86_400_000 };
    },
  } as unknown as DownstreamClient;
  const activities = createDispatchActivities({ services: { wallet: client }, workerIdentity: 'wf-tier' });
  return { activities, effects, requests: () => requests };
}

describe('a downstream answering 10,000 levels deep after its effect', () => {
  const debit = { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } };

  test('settles SUCCEEDED with Result.Invalid: sent once, one effect, no failed activity attempt', async () => {
    const wallet = deepWallet(objectsNested(10_000));
    const out = await run(debit, 'wallet-debit', { activities: wallet.activities });
    expect(out.failedTasks).toEqual([]);
    expect(wallet.effects.size).toBe(1);
    expect(wallet.requests()).toBe(1);
    expect(out.failedAttempts).toBe(0);
    expect(out.result?.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    const recorded = out.events.find((e) => e.type === 'ToolResultRecorded');
    expect(recorded).toMatchObject({ state: 'SUCCEEDED', errorCode: Failure.ResultInvalid, attempts: 1 });
    expect(out.events.some((e) => e.type === 'ToolOutcomeMarkedUnknown')).toBe(false);
  });

  test('the control: the same answer, shallow, is admitted: sent once, one effect', async () => {
    const wallet = deepWallet(objectsNested(3));
    const out = await run(debit, 'wallet-debit', { activities: wallet.activities });
    expect(wallet.effects.size).toBe(1);
    expect(wallet.requests()).toBe(1);
    expect(out.failedAttempts).toBe(0);
    const recorded = out.events.find((e) => e.type === 'ToolResultRecorded');
    expect(recorded).toMatchObject({ state: 'SUCCEEDED', resultHash: expect.any(String) });
    expect(recorded).not.toHaveProperty('errorCode');
  });
});
