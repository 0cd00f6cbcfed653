/**
 * When reconciliation cannot reach the downstream, the call stays UNKNOWN: the run waits for an operator and
 * never completes on a guess. The operator's resolution is recorded with who and why; a run whose deadline
 * passes first stops with `outcome_unknown`.
 */
import path from 'node:path';
import type { Stack } from '../../src/demo/stack';
import { readLedger } from '../../src/client/runs';
import { resolveCallUpdate } from '../../workflows/definitions';
import { spawnService, type SpawnedService } from '../../src/services/spawn';
import { DownstreamClient } from '../../src/downstream/client';
import { SA } from '../../src/server/search-attributes';
import { deadlineIn } from '../helpers/stack';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('unknown');
});
afterAll(async () => {
  await stack?.stop();
});

/** A wallet of its own that we can kill after it commits, so nobody can answer the lookup. */
async function doomedWallet(): Promise<{ wallet: SpawnedService; client: DownstreamClient }> {
  const wallet = await spawnService('wallet', { dbPath: path.join(stack.dataDir, `doomed-${Date.now()}.db`), env: { ...stack.workerEnv } });
  const client = new DownstreamClient({ baseUrl: wallet.url });
  await client.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 10_000, currency: 'EUR' });
  await client.armFault({ at: 'after_commit', do: 'delay', ms: 60_000, path: '/v1/debits' });
  return { wallet, client };
}

async function waitFor<T>(probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('an outcome nobody can establish', () => {
  test('the run waits for an operator, shows it in search attributes, and records who resolved it and why', async () => {
    const { wallet, client } = await doomedWallet();
    try {
      const out = await runAgent(stack, 'operator', input({ strategy: 'check_receipt', caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000 }, limits: { tool: 2, reconcile: 2 } }), async (handle) => {
        const key = await waitFor(async () => {
          const snap = await readLedger(handle);
          const e = snap.events.find((x) => x.type === 'DispatchIntentRecorded');
          return e?.type === 'DispatchIntentRecorded' ? e.intent.operationKey : undefined;
        });
        await waitFor(async () => ((await client.stats(key)).businessEffectCount === 1 ? true : undefined));
        await wallet.stop(); // the effect exists, and now nobody can say so
        const snap = await waitFor(async () => {
          const s = await readLedger(handle);
          return s.projection.status === 'waiting_for_operator' ? s : undefined;
        }, 60_000);
        const desc = await handle.describe();
        expect(desc.typedSearchAttributes.get(SA.unknownCalls)).toBe(1);
        expect(desc.typedSearchAttributes.get(SA.status)).toBe('waiting_for_operator');
        const id = Object.keys(snap.projection.calls)[0]!;
        expect(snap.projection.calls[id]?.state).toBe('UNKNOWN');
        // A resolution without a reason is refused by the validator; nothing is recorded.
        await expect(handle.executeUpdate(resolveCallUpdate, { args: [{ logicalCallId: id, outcome: 'SUCCEEDED', operator: 'ops:bob', reason: '' }] })).rejects.toThrow();
        await handle.executeUpdate(resolveCallUpdate, {
          args: [{ logicalCallId: id, outcome: 'SUCCEEDED', operator: 'ops:bob', reason: 'wallet statement shows the debit', receipt: 'stmt-42' }],
        });
      }, { services: { wallet: wallet.url } });
      expect(out.result.stopReason).toBe('completed');
      const resolved = out.ledger.events.find((e) => e.type === 'ToolEffectReconciled');
      expect(resolved).toMatchObject({ via: 'operator', outcome: 'SUCCEEDED', receipt: 'stmt-42' });
      expect(resolved && 'detail' in resolved ? resolved.detail : '').toContain('ops:bob');
      expect(out.ledger.events.map((e) => e.type)).toContain('OperatorWaitStarted');
    } finally {
      await wallet.stop();
    }
  });

  test('without an operator the run stops at its deadline with outcome_unknown, the call still UNKNOWN', async () => {
    const { wallet } = await doomedWallet();
    try {
      const out = await runAgent(
        stack,
        'deadline',
        input({ strategy: 'same_key_replay', deadlineAt: deadlineIn(15_000), caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000, recoveryReserveMs: 3_000 }, limits: { tool: 2, reconcile: 2 } }),
        async () => {
          await new Promise((r) => setTimeout(r, 1_500));
          await wallet.stop();
        },
        { services: { wallet: wallet.url } },
      );
      expect(out.result.stopReason).toBe('outcome_unknown');
      expect(out.result.calls[0]?.state).toBe('UNKNOWN');
      expect(out.ledger.events.some((e) => e.type === 'ToolResultRecorded' && e.state === 'FAILED')).toBe(false);
    } finally {
      await wallet.stop();
    }
  });
});
