/**
 * What one turn costs in history on the real server, and what the search attributes say: a normal turn upserts
 * no search attribute (each upsert is an event and a visibility write), while a change of state still shows.
 */
import { temporal } from '@temporalio/proto';
import type { Stack } from '../../src/demo/stack';
import { SA } from '../../src/server/search-attributes';
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
    e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.activityType?.name === 'planTurn' ? [i] : [],
  );
  return starts.slice(1).map((s, k) => s - starts[k]!);
}

test('a normal turn records 13 events and upserts no search attribute; the run still shows its state', async () => {
  const turns = 5;
  const out = await runAgent(stack, 'hist-cost', input({ scenario: 'n-debits', vars: { account: 'acct_hc', turns } }));
  expect(out.result.stopReason).toBe('completed');
  const history = await out.handle.fetchHistory();
  const events = history.events ?? [];

  const perTurn = eventsPerTurn(events);
  expect(perTurn).toHaveLength(turns); // turns 1..5 each end where the next model call is scheduled
  // workflow task (3) + model call (3) + workflow task (3) + authorization marker (1) + tool call (3)
  expect(perTurn.slice(1)).toEqual(Array(turns - 1).fill(13));

  // Upserts: identity and status at the start, the final status at the end, and nothing per turn.
  const upserts = events.filter((e) => e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
  expect(upserts.length).toBeLessThanOrEqual(3);

  const desc = await out.handle.describe();
  expect(desc.typedSearchAttributes.get(SA.status)).toBe('stopped');
  expect(desc.typedSearchAttributes.get(SA.stopReason)).toBe('completed');
  expect(desc.typedSearchAttributes.get(SA.principal)).toBe('user:alice');
  expect(desc.typedSearchAttributes.get(SA.unknownCalls)).toBe(0);
});
