/**
 * Stateless worker hosts for model-planned runs: the transcript store on PostgreSQL (LEDGERLOOP_TRANSCRIPT_URL),
 * on a private PostgreSQL this file starts (host/server/postgres.ts). First the store's rules, as the SQLite store
 * keeps them; then an OpenAI-planned run (the real `openai` client over HTTP to a scripted server) whose turns are
 * planned by three worker processes, each in a directory of its own, two of them SIGKILLed while waiting on the
 * model. With a SQLite file per host instead, the same run fails with Planner.TranscriptMissing: the shared store
 * is what makes the hosts interchangeable.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startAgentRun, readLedger } from '../../host/client/runs';
import type { Stack } from '../../lab/stack';
import {
  PostgresTranscriptStore,
  parseTranscriptUrl,
  TranscriptStoreConfigError,
  TRANSCRIPT_URL_ENV,
} from '../../src/stores/transcript-store-pg';
import type { AssistantTurn } from '../../src/stores/transcript-store';
import { spawnWorker, type WorkerProcess } from '../../lab/spawn-worker';
import { input } from '../helpers/run';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { startTestStack, taskQueue } from '../helpers/stack';
import { reply, startOpenAICompatibleServer, type OpenAICompatibleServer } from '../support/openai-compatible-server';

jest.setTimeout(180_000);

let stack: Stack;
let dir: string;
let pg: TestPostgres;
let url: string;

beforeAll(async () => {
  [stack, pg] = await Promise.all([startTestStack('transcripts-shared'), startTestPostgres('transcripts-pg')]);
  dir = pg.dir;
  url = pg.url;
});
afterAll(async () => {
  await stack?.stop();
  await pg?.stop();
});

const said = (id: string): AssistantTurn => ({
  content: null,
  toolCalls: [{ id, name: 'wallet_debit', arguments: '{}' }],
});

describe('the PostgreSQL transcript store keeps the SQLite store’s rules', () => {
  test('a retried attempt replaces its turn; a slow older attempt never overwrites a newer one', async () => {
    const store = new PostgresTranscriptStore(url);
    try {
      const run = `run-${Date.now()}`;
      await store.saveAssistantTurn(run, 1, said('a'), { scheduledMs: 100, attempt: 1 });
      await store.saveAssistantTurn(run, 1, said('b'), { scheduledMs: 100, attempt: 2 });
      await store.saveAssistantTurn(run, 1, said('zombie'), { scheduledMs: 100, attempt: 1 });
      const turns = await store.loadTurns(run, 2);
      expect(turns).toHaveLength(1);
      expect(turns[0]?.assistant.toolCalls[0]?.id).toBe('b');
    } finally {
      await store.close();
    }
  });

  test('a later scheduling wins at attempt 1 and drops the old turn’s results; results are idempotent by call id', async () => {
    const store = new PostgresTranscriptStore(url);
    try {
      const run = `run-reset-${Date.now()}`;
      await store.saveAssistantTurn(run, 1, said('old'), { scheduledMs: 100, attempt: 3 });
      await store.saveToolResults(run, 1, [{ providerCallId: 'old', content: '{"state":"SUCCEEDED"}' }]);
      await store.saveToolResults(run, 1, [{ providerCallId: 'old', content: '{"state":"SUCCEEDED"}' }]);
      expect((await store.loadTurns(run, 2))[0]?.toolResults.size).toBe(1);
      await store.saveAssistantTurn(run, 1, said('reset'), { scheduledMs: 200, attempt: 1 });
      const [turn] = await store.loadTurns(run, 2);
      expect(turn?.assistant.toolCalls[0]?.id).toBe('reset');
      expect(turn?.toolResults.size).toBe(0);
    } finally {
      await store.close();
    }
  });

  test('three stores (three hosts) starting at once create the tables once and see each other’s writes', async () => {
    const stores = [0, 1, 2].map(() => new PostgresTranscriptStore(url));
    try {
      const run = `run-shared-${Date.now()}`;
      await Promise.all(
        stores.map((s, i) => s.saveAssistantTurn(run, i + 1, said(`t${i + 1}`), { scheduledMs: 100, attempt: 1 })),
      );
      for (const s of stores) expect((await s.loadTurns(run, 4)).map((t) => t.turn)).toEqual([1, 2, 3]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test('a URL that is not postgres:// or names no database is a typed configuration error that never repeats the password', () => {
    expect(() => parseTranscriptUrl('mysql://u:hunter2@h/db')).toThrow(TranscriptStoreConfigError);
    expect(() => parseTranscriptUrl('postgres://u:hunter2@h')).toThrow(/names no database/);
    try {
      parseTranscriptUrl('mysql://u:hunter2@h/db');
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });
});

describe('an OpenAI-planned run across worker hosts', () => {
  let model: OpenAICompatibleServer;
  const started: WorkerProcess[] = [];
  beforeEach(async () => {
    model = await startOpenAICompatibleServer();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((w) => w.signal('SIGKILL')));
    await model.close();
  });

  /** Worker host `name` on `queue`: a directory of its own; the transcript store shared or its own SQLite file. */
  const host = (name: string, queue: string, shared: boolean): Promise<WorkerProcess> => {
    const home = path.join(dir, `${queue}-${name}`);
    mkdirSync(home, { recursive: true });
    return spawnWorker({
      address: stack.server.address,
      taskQueue: queue,
      services: { wallet: stack.wallet.url },
      workflowBundlePath: stack.bundlePath,
      cwd: home,
      env: {
        ...stack.workerEnv,
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'test-key',
        LEDGERLOOP_TRANSCRIPT_DB: path.join(home, 'transcripts.db'),
        [TRANSCRIPT_URL_ENV]: shared ? url : '',
      },
    }).then((w) => {
      started.push(w);
      return w;
    });
  };

  const until = async (what: string, probe: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> => {
    const end = Date.now() + ms;
    while (!(await probe())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /**
   * Turn 1 on host A; A is SIGKILLed while the model holds its turn-2 request; host B plans turn 2 (Temporal's next
   * attempt) from the store; B is SIGKILLed the same way in turn 3; host C plans turn 3.
   */
  async function runAcrossHosts(shared: boolean) {
    const queue = taskQueue(shared ? 'transcripts-pg' : 'transcripts-sqlite');
    const account = `acct_tr_${shared ? 'pg' : 'sq'}_${Date.now()}`;
    await stack.walletClient.seedAccount({ tenant: 'acme', account, balanceMinor: 10_000, currency: 'EUR' });
    const debit = (minor: number) => ({
      name: 'wallet_debit',
      arguments: { account, amount: { minor, currency: 'EUR' } },
    });
    model.script(
      reply.toolCalls(debit(100)), // turn 1, host A
      reply.slow(30_000, reply.final('never seen')), // turn 2, attempt 1: A is killed while it waits
      reply.toolCalls(debit(200)), // turn 2, attempt 2, host B
      reply.slow(30_000, reply.final('never seen')), // turn 3, attempt 1: B is killed while it waits
      reply.final('Charged twice.'), // turn 3, attempt 2, host C
    );
    const a = await host('a', queue, shared);
    const handle = await startAgentRun(stack.client, {
      workflowId: `${queue}-run`,
      taskQueue: queue,
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: `${queue}-run` }, 'user:alice', 'acme'),
      input: input({
        goal: 'Charge 1.00 EUR, then 2.00 EUR',
        planner: { kind: 'openai', model: 'test-model' },
        caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000, modelAttemptMs: 3_000 },
        deadlineAt: new Date(Date.now() + 150_000).toISOString(),
      }),
    });
    await until('turn 2 asked of the model by host A', () => model.requests.length >= 2);
    await a.signal('SIGKILL');
    await host('b', queue, shared);
    await until(
      'turn 3 asked of the model by host B, or the run ended',
      async () => model.requests.length >= 4 || (await handle.describe()).status.name !== 'RUNNING',
    );
    if ((await handle.describe()).status.name === 'RUNNING') {
      await started[started.length - 1]!.signal('SIGKILL');
      await host('c', queue, shared);
    }
    const result = await handle.result();
    const history = await handle.fetchHistory();
    // Which worker started each planTurn attempt that completed, from the history.
    const byId = new Map((history.events ?? []).map((e) => [String(e.eventId), e]));
    const planners = (history.events ?? [])
      .filter((e) => e.activityTaskCompletedEventAttributes)
      .map((e) => byId.get(String(e.activityTaskCompletedEventAttributes!.startedEventId)))
      .map((started) => ({
        started,
        scheduled: byId.get(String(started?.activityTaskStartedEventAttributes?.scheduledEventId)),
      }))
      .filter((x) => x.scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'planTurn')
      .map((x) => x.started?.activityTaskStartedEventAttributes?.identity ?? '?');
    return { result, planners, ledger: await readLedger(handle) };
  }

  test('with the store on PostgreSQL, three hosts plan its three turns and it completes: two debits, each once', async () => {
    const out = await runAcrossHosts(true);
    expect(out.result.stopReason).toBe('completed');
    expect(out.result.finalText).toBe('Charged twice.');
    expect(out.result.calls.map((c) => c.state)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    for (const c of out.result.calls)
      expect((await stack.walletClient.stats(c.operationKey!)).businessEffectCount).toBe(1);
    expect(out.planners).toHaveLength(3);
    expect(new Set(out.planners).size).toBe(3); // three different worker processes planned the three turns
    // The conversation the model saw on host C holds both earlier turns, rebuilt from the shared store.
    const last = model.requests[model.requests.length - 1];
    expect(last?.body?.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
  });

  test('with a SQLite file per host, the turn planned on another host finds no transcript (the case that can fail)', async () => {
    const out = await runAcrossHosts(false);
    expect(out.result.stopReason).toBe('model_failed');
    const stopped = out.ledger.events.find((e) => e.type === 'RunCompleted');
    expect(stopped && 'detail' in stopped ? stopped.detail : '').toMatch(
      /planning turn 2 .*the transcript store has no turn 1/,
    );
  });
});
