/**
 * Issue #39, hole 3: one model proposal wedged a run. The scripted model proposes arguments nested tens of thousands
 * deep; before the fix every workflow task of the run failed with `RangeError: Maximum call stack size exceeded`,
 * on every retry, until someone terminated it. Each case here reads the history for failed workflow tasks, and
 * shows the refusal is typed and read by the model as an observation; the control beside them is the same run with
 * a normal proposal, which dispatches.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startAgentRun } from '../../host/client/runs';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { Failure } from '../../src/domain/failures';
import { MAX_JSON_DEPTH } from '../../src/domain/json-depth';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
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

async function run(
  vars: Record<string, unknown>,
  scenario = 'deep-arguments',
  /** What the downstream's answer carries beside its own body (a hostile downstream). */
  extraBody?: Record<string, unknown>,
) {
  const taskQueue = `deep-proposal-${process.pid}-${++runs}`;
  const fake = new FakeDownstream();
  const stubs = () => {
    const a = fake.activities();
    if (extraBody === undefined) return a;
    return {
      ...a,
      dispatchTool: async (req: DispatchRequest) => {
        const res = await a.dispatchTool(req);
        return { ...res, body: { ...(res.body as object), ...extraBody } };
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
    return { ...seen, result, fake, events };
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
    const out = await run(debit, 'wallet-debit', { extra: nested(3_000) });
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    expect(out.fake.effectsOf('wallet_debit')).toHaveLength(1);
    const recorded = out.events.find((e) => e.type === 'ToolResultRecorded');
    expect(recorded).toMatchObject({ state: 'SUCCEEDED', errorCode: Failure.ResultInvalid });
    expect(recorded).not.toHaveProperty('resultHash');
    // the control: the same extra field, shallow, is admitted (the result schema strips what it does not name)
    const shallow = await run(debit, 'wallet-debit', { extra: nested(3) });
    expect(shallow.failedTasks).toEqual([]);
    const admitted = shallow.events.find((e) => e.type === 'ToolResultRecorded');
    expect(admitted).toMatchObject({ state: 'SUCCEEDED', resultHash: expect.any(String) });
    expect(admitted).not.toHaveProperty('errorCode');
  });

  test('the control: a normal wallet_debit in the same run shape dispatches and succeeds', async () => {
    const out = await run({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } }, 'wallet-debit');
    expect(out.failedTasks).toEqual([]);
    expect(out.result?.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    expect(out.fake.effectsOf('wallet_debit')).toHaveLength(1);
  });
});
