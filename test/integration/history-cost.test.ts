/**
 * What one turn costs in history on the real server, and what the search attributes say: a normal turn upserts
 * no search attribute (each upsert is an event and a visibility write), while a change of state still shows.
 */
import { temporal } from '@temporalio/proto';
import type { Stack } from '../../lab/stack';
import { SA } from '../../src/domain/search-attributes';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(180_000);

const EventType = temporal.api.enums.v1.EventType;
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('history-cost');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_hc', balanceMinor: 100_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});

/** Events between consecutive model-call schedulings: one model call plus the one tool call it proposed. */
function eventsPerTurn(events: temporal.api.history.v1.IHistoryEvent[]): number[] {
  const starts = events.flatMap((e, i) =>
    e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
    e.activityTaskScheduledEventAttributes?.activityType?.name === 'planTurn'
      ? [i]
      : [],
  );
  return starts.slice(1).map((s, k) => s - starts[k]!);
}

test('a normal turn records 12 events and upserts no search attribute; the run still shows its state', async () => {
  const turns = 5;
  const out = await runAgent(stack, 'hist-cost', input({ scenario: 'n-debits', vars: { account: 'acct_hc', turns } }));
  expect(out.result.stopReason).toBe('completed');
  const history = await out.handle.fetchHistory();
  const events = history.events ?? [];

  const perTurn = eventsPerTurn(events);
  expect(perTurn).toHaveLength(turns); // turns 1..5 each end where the next model call is scheduled
  // Every turn, the first included: model call (3) + workflow task (3) + tool call (3) + workflow task (3). The
  // run decides from the policy its opening returned, so no turn asks the authorizer local activity (whose marker
  // made the first turn 13 events).
  expect(perTurn).toEqual(Array(turns).fill(12));
  const markers = events.filter(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED &&
      e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  );
  expect(markers).toHaveLength(0);
  // The opening is the first model call's: the planner activity verified the token before calling the model, so
  // the run schedules no identity activity of its own.
  const scheduled = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  expect(scheduled).not.toContain('verifyIdentity');
  expect(scheduled[0]).toBe('planTurn');
  // What the authorizer's marker recorded is still in history: the policy and its digest, in the first planning
  // turn's result, and the ledger's decisions name that policy's version.
  const firstPlan = events.find((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)?.eventId;
  const opened = events.find(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
      String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(firstPlan),
  );
  const payload = opened?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
  const result = JSON.parse(Buffer.from(payload ?? []).toString('utf8')) as {
    opening?: { identity: { principalId: string }; policy?: { digest: string; document: { version: string } } };
  };
  expect(result.opening?.identity.principalId).toBe('user:alice');
  expect(result.opening?.policy?.digest).toMatch(/^[0-9a-f]{64}$/);
  const allowed = out.ledger.events.filter((e) => e.type === 'AuthorizationAllowed');
  expect(allowed).toHaveLength(turns);
  for (const a of allowed) expect(a).toMatchObject({ policyVersion: result.opening?.policy?.document.version });

  // Our upserts: only the final status (startAgentRun sets the rest at start), nothing per turn. (The SDK adds
  // one TemporalChangeVersion upsert per patch a run records, once per run.)
  const upserts = events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
    .map((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}))
    .filter((keys) => !keys.includes('TemporalChangeVersion'));
  expect(upserts).toEqual([expect.arrayContaining(['LedgerloopStatus', 'LedgerloopStopReason'])]);

  const desc = await out.handle.describe();
  expect(desc.typedSearchAttributes.get(SA.status)).toBe('stopped');
  expect(desc.typedSearchAttributes.get(SA.stopReason)).toBe('completed');
  expect(desc.typedSearchAttributes.get(SA.principal)).toBe('user:alice');
  expect(desc.typedSearchAttributes.get(SA.unknownCalls)).toBe(0);
});
