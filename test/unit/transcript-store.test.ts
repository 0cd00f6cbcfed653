import { SqliteTranscriptStore, type AssistantTurn } from '../../src/stores/transcript-store';

const said = (id: string): AssistantTurn => ({
  content: null,
  toolCalls: [{ id, name: 'wallet_debit', arguments: '{}' }],
});

describe('SQLite transcript store: one row per (run, turn), idempotent under retries', () => {
  let store: SqliteTranscriptStore;
  beforeEach(() => {
    store = new SqliteTranscriptStore(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  test('a retried attempt replaces its turn instead of adding one', async () => {
    await store.saveAssistantTurn('run-1', 1, said('a'), { scheduledMs: 100, attempt: 1 });
    await store.saveAssistantTurn('run-1', 1, said('b'), { scheduledMs: 100, attempt: 2 });
    const turns = await store.loadTurns('run-1', 2);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.assistant.toolCalls[0]?.id).toBe('b');
  });

  test('a slow older attempt writing late never overwrites a newer attempt', async () => {
    await store.saveAssistantTurn('run-1', 1, said('new'), { scheduledMs: 100, attempt: 3 });
    await store.saveAssistantTurn('run-1', 1, said('zombie'), { scheduledMs: 100, attempt: 2 });
    expect((await store.loadTurns('run-1', 2))[0]?.assistant.toolCalls[0]?.id).toBe('new');
  });

  test('a later scheduling (a workflow reset re-planned the turn) wins even at attempt 1, and drops stale results', async () => {
    await store.saveAssistantTurn('run-1', 1, said('old'), { scheduledMs: 100, attempt: 3 });
    await store.saveToolResults('run-1', 1, [{ providerCallId: 'old', content: '{"state":"SUCCEEDED"}' }]);
    await store.saveAssistantTurn('run-1', 1, said('reset'), { scheduledMs: 200, attempt: 1 });
    const [turn] = await store.loadTurns('run-1', 2);
    expect(turn?.assistant.toolCalls[0]?.id).toBe('reset');
    expect(turn?.toolResults.size).toBe(0);
  });

  test('tool results are keyed by provider call id and rewriting them is idempotent', async () => {
    await store.saveAssistantTurn('run-1', 1, said('a'), { scheduledMs: 100, attempt: 1 });
    await store.saveToolResults('run-1', 1, [{ providerCallId: 'a', content: 'x' }]);
    await store.saveToolResults('run-1', 1, [{ providerCallId: 'a', content: 'x' }]);
    const [turn] = await store.loadTurns('run-1', 2);
    expect([...(turn?.toolResults ?? new Map()).entries()]).toEqual([['a', 'x']]);
  });

  test('loadTurns returns only earlier turns of the same run, in order', async () => {
    for (const t of [3, 1, 2]) await store.saveAssistantTurn('run-1', t, said(`t${t}`), { scheduledMs: t, attempt: 1 });
    await store.saveAssistantTurn('run-2', 1, said('other'), { scheduledMs: 1, attempt: 1 });
    expect((await store.loadTurns('run-1', 3)).map((t) => t.turn)).toEqual([1, 2]);
  });
});
