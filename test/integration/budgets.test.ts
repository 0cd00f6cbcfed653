/**
 * Deadlines, budgets and retry ownership on the real server: every stop reason has its own cause; a pruned
 * idempotency key never turns a retry into a second charge; continue-as-new carries the ledger and its hash;
 * retry accounting and the circuit breaker are computed from the durable record.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import OpenAI from 'openai';
import type { Stack } from '../../lab/stack';
import { readLedger } from '../../host/client/runs';
import { spawnedClient, spawnService } from '../../services/spawn';
import { retryAccountingQuery, ledgerQuery } from '../../workflows/definitions';
import { deadlineIn, startTestStack } from '../helpers/stack';
import { input, runAgent } from '../helpers/run';
import { runWithModel } from '../support/model-run';
import { reply, startOpenAICompatibleServer } from '../support/openai-compatible-server';

jest.setTimeout(180_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('budgets');
});
afterAll(async () => {
  await stack?.stop();
});
let n = 0;
async function account(balance = 100_000): Promise<string> {
  n += 1;
  const a = `acct_b${n}`;
  await stack.walletClient.seedAccount({ tenant: 'acme', account: a, balanceMinor: balance, currency: 'EUR' });
  return a;
}
const requests = async () => (await stack.walletClient.stats('', { prefix: true })).dispatchCount;

describe('stop reasons', () => {
  test('no progress: the same proposal twice in a row stops the run before a second charge', async () => {
    const a = await account();
    // onAbort 'leave': the one debit stands (and is named for an operator), so the balance shows no second charge.
    const out = await runAgent(stack, 'stuck', input({ scenario: 'stuck', vars: { account: a }, onAbort: 'leave' }));
    expect(out.result.stopReason).toBe('budget_exhausted');
    expect(out.result.detail).toContain('no progress');
    expect(out.result.detail).toMatch(/left standing for an operator: lc_1_\w+ \(wallet_debit\)/);
    expect((await stack.walletClient.balance('acme', a))?.minor).toBe(100_000 - 100);
  });

  test('deadline_exceeded: attempts are bounded by the absolute run deadline, not a fresh timeout each', async () => {
    const a = await account();
    const out = await runAgent(
      stack,
      'deadline',
      input({
        scenario: 'endless-debits',
        vars: { account: a },
        deadlineAt: deadlineIn(5_000),
        caps: { recoveryReserveMs: 2_000 },
        budgets: { maxTurns: 1000, maxToolCalls: 1000 },
      }),
    );
    expect(out.result.stopReason).toBe('deadline_exceeded');
  });

  test('token and cost budgets come from the provider usage figures (real openai client, compatible server)', async () => {
    const model = await startOpenAICompatibleServer();
    try {
      const a = await account();
      const debit = { name: 'wallet_debit', arguments: { account: a, amount: { minor: 100, currency: 'EUR' } } };
      model.script(
        reply.toolCalls(debit),
        reply.toolCalls({ ...debit, arguments: { ...debit.arguments, amount: { minor: 101, currency: 'EUR' } } }),
      );
      const client = new OpenAI({ baseURL: model.url, apiKey: 'test-key', maxRetries: 0 });
      const transcriptDb = path.join(mkdtempSync(path.join(os.tmpdir(), 'tx-')), 't.db');
      const tokens = await runWithModel(
        stack,
        'tokens',
        input({ planner: { kind: 'openai', model: 'test-model' }, budgets: { maxTokens: 1 } }),
        { client, transcriptDb },
      );
      expect(tokens.result.stopReason).toBe('budget_exhausted');
      expect(tokens.result.detail).toMatch(/^tokens: \d+ used of 1$/);
      const recorded = tokens.ledger.events.find((e) => e.type === 'ModelResponseRecorded');
      expect(recorded && 'usage' in recorded ? recorded.usage?.promptTokens : 0).toBeGreaterThan(0);
      const cost = await runWithModel(
        stack,
        'cost',
        input({
          planner: { kind: 'openai', model: 'test-model' },
          budgets: { maxCostMicros: 1 },
          prices: { 'test-model': { promptPerMTokMicros: 1_000_000_000, completionPerMTokMicros: 0 } },
        }),
        { client, transcriptDb },
      );
      expect(cost.result.stopReason).toBe('budget_exhausted');
      expect(cost.result.detail).toMatch(/^cost: \d+ micros used of 1$/);
    } finally {
      await model.close();
    }
  });
});

describe('idempotency key retention', () => {
  test('a same-key retry after the downstream pruned the key is refused and reconciled: one charge', async () => {
    // A wallet of its own that keeps keys for 1.5 s (the rest of this file uses the default retention). The window
    // must cover the first send even on a loaded machine (a downstream refuses any request whose intent is older
    // than its retention), and the retry must come after 80% of it: the worker's client gives up on the held
    // response after 2 s, so the retry is at least that late.
    const wallet = await spawnService('wallet', {
      dbPath: path.join(stack.dataDir, `retention-${Date.now()}.db`),
      retentionMs: 1_500,
      env: { ...stack.capabilityTrust.serviceEnv },
    });
    try {
      const client = spawnedClient(wallet, { capabilityKey: stack.capabilityKey, signs: 'lookups' });
      await client.seedAccount({ tenant: 'acme', account: 'acct_r', balanceMinor: 100_000, currency: 'EUR' });
      // The first attempt commits, then its response is held past the client's patience and lost.
      await client.armFault({ at: 'after_commit', do: 'delay', ms: 4_000, path: '/v1/debits', occurrence: 1 });
      await client.armFault({ at: 'after_commit', do: 'drop_response', path: '/v1/debits', occurrence: 1 });
      const out = await runAgent(
        stack,
        'retention',
        input({ strategy: 'same_key_replay', vars: { account: 'acct_r', amount: { minor: 1_250, currency: 'EUR' } } }),
        undefined,
        {
          services: { wallet: wallet.url },
        },
      );
      const key = out.result.calls[0]!.operationKey!;
      expect((await client.stats(key)).businessEffectCount).toBe(1);
      expect((await client.balance('acme', 'acct_r'))?.minor).toBe(100_000 - 1_250);
      expect(out.ledger.events.find((e) => e.type === 'ToolOutcomeMarkedUnknown')).toMatchObject({
        cause: 'retention_expired',
      });
      expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({
        via: 'receipt_lookup',
        outcome: 'SUCCEEDED',
      });
    } finally {
      await wallet.stop();
    }
  });
});

describe('continue-as-new', () => {
  test('a long run continues as new, carrying the ledger projection and its hash, not the transcript', async () => {
    const a = await account();
    let previousHash = '';
    const out = await runAgent(
      stack,
      'can',
      input({
        scenario: 'endless-debits',
        vars: { account: a },
        onAbort: 'leave',
        budgets: { maxTurns: 9, maxToolCalls: 20, maxHistoryEvents: 40 },
      }),
      async (handle) => {
        await handle.result();
        const first = (await readLedger(handle)).events[0];
        const from = first && 'fromTemporalRunId' in first ? first.fromTemporalRunId : '';
        // The run before the last continue-as-new, queried while the worker still runs.
        previousHash = (await stack.client.workflow.getHandle(handle.workflowId, from).query(ledgerQuery))
          .projectionHash;
      },
    );
    expect(out.result.stopReason).toBe('budget_exhausted');
    expect(out.result.calls).toHaveLength(9); // every call of every continued run is still in the projection
    const carried = out.ledger.events[0];
    expect(carried?.type).toBe('LedgerCarriedForward');
    // The previous run ended on exactly the hash the continued run starts from.
    expect(previousHash).toMatch(/^[0-9a-f]{64}$/);
    expect(carried && 'projectionHash' in carried ? carried.projectionHash : '').toBe(previousHash);
    expect(out.ledger.eventCount).toBeGreaterThan(out.ledger.events.length);
    expect((await stack.walletClient.balance('acme', a))?.minor).toBe(
      100_000 - [100, 101, 102, 103, 104, 105, 106, 107, 108].reduce((x, y) => x + y, 0),
    );
  });
});

describe('retry accounting and the circuit breaker', () => {
  test('a dependency failing every request: attempts per call from history, then its circuit opens', async () => {
    const a = await account();
    await stack.walletClient.armFault({
      at: 'before_commit',
      do: 'error_5xx',
      path: '/v1/debits',
      occurrence: 1,
      times: 1_000,
    });
    let seenAfterOpen = -1;
    let acct:
      | {
          dependencies: Record<string, { logicalCalls: number; attempts: number }>;
          amplification: Record<string, number>;
        }
      | undefined;
    const out = await runAgent(
      stack,
      'breaker',
      input({
        scenario: 'endless-debits',
        vars: { account: a },
        onToolFailure: 'report_to_model',
        budgets: { maxTurns: 5, maxToolCalls: 10 },
        limits: { tool: 2, reconcile: 2 },
      }),
      async (handle) => {
        for (let i = 0; i < 300; i++) {
          const snap = await readLedger(handle).catch(() => undefined);
          if (snap && Object.keys(snap.projection.circuits).length > 0) {
            seenAfterOpen = await requests();
            acct = await handle.query(retryAccountingQuery);
            return;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      },
    );
    await stack.walletClient.clearFaults();
    expect(acct?.dependencies['wallet']?.logicalCalls).toBe(3);
    // Every attempt the ledger counts is a dispatch attempt in Temporal's history, no more, no less.
    expect(out.ledger.projection.dependencies['wallet']?.attempts).toBe(out.dispatchAttempts);
    expect(acct?.amplification['wallet']).toBe(2); // limits.tool = 2, and every attempt failed
    expect(out.ledger.events.some((e) => e.type === 'CircuitOpened')).toBe(true);
    // Turns after the breaker opened were refused before reaching the wallet.
    const refused = out.ledger.events.filter((e) => e.type === 'ProposalRejected' && e.code === 'Dispatch.CircuitOpen');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(await requests()).toBe(seenAfterOpen);
  });
});
