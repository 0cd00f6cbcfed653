/**
 * When reconciliation cannot reach the downstream, the call stays UNKNOWN: the run waits for an operator and
 * never completes on a guess. The operator's resolution is checked against the downstream first (lookup and
 * seal by key): it is refused while the downstream cannot answer or contradicts it, and recorded with who, why
 * and the lookup's evidence when it agrees. A run whose deadline passes first stops with `outcome_unknown`.
 */
import path from 'node:path';
import type { Stack } from '../../lab/stack';
import { readLedger } from '../../host/client/runs';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { resolveCallUpdate, type OperatorResolution } from '../../workflows/definitions';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { SA } from '../../src/domain/search-attributes';
import { deadlineIn } from '../helpers/stack';
import { input, runAgent, searchAttributesWhen } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('unknown');
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * A wallet of its own that we can kill after it commits (or while it holds the request before committing), so
 * nobody can answer the lookup; `restart` brings it back on the same port and database.
 */
async function doomedWallet(at: 'after_commit' | 'before_commit' = 'after_commit') {
  const dbPath = path.join(stack.dataDir, `doomed-${Date.now()}.db`);
  const wallet = await spawnService('wallet', { dbPath, env: { ...stack.capabilityTrust.serviceEnv } });
  const client = spawnedClient(wallet, { capabilityKey: stack.capabilityKey });
  await client.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 10_000, currency: 'EUR' });
  await client.armFault({ at, do: 'delay', ms: 60_000, path: '/v1/debits' });
  const port = Number(new URL(wallet.url).port);
  const restart = (): Promise<SpawnedService> =>
    spawnService('wallet', { dbPath, port, env: { ...stack.capabilityTrust.serviceEnv } });
  return { wallet, client, restart };
}

/** The typed refusal of a resolveCall update (an ApplicationFailure cause), or a test failure if it was accepted. */
async function refusal(handle: WorkflowHandle, res: unknown): Promise<{ type: string | undefined; message: string }> {
  const err: unknown = await handle.executeUpdate(resolveCallUpdate, { args: [res as OperatorResolution] }).then(
    () => new Error(`resolution accepted: ${JSON.stringify(res)}`),
    (e: unknown) => e,
  );
  if (!(err instanceof WorkflowUpdateFailedError)) throw err;
  const cause = err.cause;
  return {
    type: cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined,
    message: cause?.message ?? '',
  };
}

async function waitForOperator(handle: WorkflowHandle) {
  return waitFor(async () => {
    const s = await readLedger(handle);
    return s.projection.status === 'waiting_for_operator' ? s : undefined;
  }, 60_000);
}

async function operationKey(handle: WorkflowHandle): Promise<string> {
  return waitFor(async () => {
    const snap = await readLedger(handle);
    const e = snap.events.find((x) => x.type === 'DispatchIntentRecorded');
    return e?.type === 'DispatchIntentRecorded' ? e.intent.operationKey : undefined;
  });
}

const unknownRun = () =>
  input({
    strategy: 'check_receipt',
    deadlineAt: deadlineIn(120_000),
    caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000 },
    limits: { tool: 2, reconcile: 2 },
  });

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
  test('the run waits for an operator; a resolution the downstream cannot confirm or contradicts is refused, the confirmed one is recorded with its evidence', async () => {
    const { wallet, client, restart } = await doomedWallet();
    let back: SpawnedService | undefined;
    try {
      const out = await runAgent(
        stack,
        'operator',
        unknownRun(),
        async (handle) => {
          const key = await operationKey(handle);
          await waitFor(async () => ((await client.stats(key)).businessEffectCount === 1 ? true : undefined));
          await wallet.stop(); // the effect exists, and now nobody can say so
          const snap = await waitForOperator(handle);
          const attrs = await searchAttributesWhen(handle, SA.status, 'waiting_for_operator');
          expect(attrs.get(SA.unknownCalls)).toBe(1);
          expect(attrs.get(SA.status)).toBe('waiting_for_operator');
          const id = Object.keys(snap.projection.calls)[0]!;
          expect(snap.projection.calls[id]?.state).toBe('UNKNOWN');
          const who = {
            logicalCallId: id,
            token: await stack.identity.issueFor(
              { purpose: 'resolve', run: handle.workflowId, call: id },
              'ops:bob',
              'acme',
              ['operator'],
            ),
          };
          // A resolution without a reason is refused by the validator; nothing is recorded.
          expect(await refusal(handle, { ...who, outcome: 'SUCCEEDED', reason: '' })).toMatchObject({
            type: 'Operator.ResolutionInvalid',
          });
          // The wallet cannot be asked: the statement is not taken on trust, nothing is recorded (fail closed).
          const unreachable = await refusal(handle, {
            ...who,
            outcome: 'SUCCEEDED',
            reason: 'wallet statement shows the debit',
            receipt: 'stmt-42',
          });
          expect(unreachable.type).toBe('Operator.LookupUnreachable');
          expect((await readLedger(handle)).projection.calls[id]?.state).toBe('UNKNOWN');

          back = await restart();
          const found = await client.lookup(key, { tenant: 'acme' });
          if (found.kind !== 'found' || found.record.receipt === undefined)
            throw new Error(`expected the debit, got ${found.kind}`);
          const receipt = found.record.receipt;
          // FAILED while the wallet holds the effect: refused, and the message names the receipt to settle with.
          const failed = await refusal(handle, { ...who, outcome: 'FAILED', reason: 'customer says no charge' });
          expect(failed.type).toBe('Operator.ResolutionRefused');
          expect(failed.message).toContain(receipt);
          // SUCCEEDED with a receipt the wallet does not confirm: refused.
          expect(
            await refusal(handle, { ...who, outcome: 'SUCCEEDED', reason: 'statement', receipt: 'stmt-42' }),
          ).toMatchObject({ type: 'Operator.ResolutionRefused' });
          // Absurd input never fails a workflow task: each is refused and the run keeps waiting.
          for (const absurd of [
            null,
            'lc',
            { ...who, outcome: 'BANANA', reason: 'x' },
            { ...who, logicalCallId: '__proto__', outcome: 'FAILED', reason: 'x' },
            { ...who, logicalCallId: 'constructor', outcome: 'FAILED', reason: 'x' },
            { ...who, outcome: 'SUCCEEDED', reason: 'x', receipt: 42 },
            { ...who, reason: 'x'.repeat(10_000), outcome: 'FAILED' },
          ]) {
            expect(await refusal(handle, absurd)).toMatchObject({ type: 'Operator.ResolutionInvalid' });
          }
          expect((await readLedger(handle)).projection.calls[id]?.state).toBe('UNKNOWN');
          // The receipt the wallet confirms: accepted.
          await handle.executeUpdate(resolveCallUpdate, {
            args: [{ ...who, outcome: 'SUCCEEDED', reason: 'wallet statement shows the debit', receipt }],
          });
        },
        { services: { wallet: wallet.url } },
      );
      expect(out.result.stopReason).toBe('completed');
      const resolved = out.ledger.events.filter((e) => e.type === 'ToolEffectReconciled');
      expect(resolved).toHaveLength(1);
      expect(resolved[0]).toMatchObject({
        via: 'operator',
        outcome: 'SUCCEEDED',
        receipt: expect.stringMatching(/.+/),
        detail: 'ops:bob: wallet statement shows the debit',
        evidence: { lookup: 'found', status: 'completed', service: 'wallet', checkedAt: expect.any(String) },
      });
      const r = resolved[0]!;
      expect(r.type === 'ToolEffectReconciled' && r.evidence?.receipt).toBe(
        r.type === 'ToolEffectReconciled' && r.receipt,
      );
      expect(out.ledger.events.map((e) => e.type)).toContain('OperatorWaitStarted');
    } finally {
      await wallet.stop();
      await back?.stop();
    }
  });

  test('SUCCEEDED with no effect downstream is refused (the lookup sealed the key), and FAILED is then recorded as sealed', async () => {
    // The wallet holds the request before committing and answers "in progress" to every lookup: UNKNOWN.
    const { wallet, client, restart } = await doomedWallet('before_commit');
    let back: SpawnedService | undefined;
    try {
      const out = await runAgent(
        stack,
        'operator-none',
        unknownRun(),
        async (handle) => {
          const key = await operationKey(handle);
          const snap = await waitForOperator(handle);
          const id = Object.keys(snap.projection.calls)[0]!;
          await wallet.stop(); // the held request dies uncommitted
          back = await restart();
          // A restarted process has a new admin listener (port and token): ask it through a client of its own.
          expect(await spawnedClient(back, { capabilityKey: stack.capabilityKey }).stats(key)).toMatchObject({
            businessEffectCount: 0,
          });
          const who = {
            logicalCallId: id,
            token: await stack.identity.issueFor(
              { purpose: 'resolve', run: handle.workflowId, call: id },
              'ops:bob',
              'acme',
              ['operator'],
            ),
          };
          const claimed = await refusal(handle, {
            ...who,
            outcome: 'SUCCEEDED',
            reason: 'I think it went through',
            receipt: 'r_made_up',
          });
          expect(claimed.type).toBe('Operator.ResolutionRefused');
          expect(claimed.message).toMatch(/sealed/);
          // The refused claim still sealed the key: nothing can commit under it any more.
          expect(await client.lookup(key, { tenant: 'acme' })).toEqual({ kind: 'not_found', sealed: true });
          expect((await readLedger(handle)).projection.calls[id]?.state).toBe('UNKNOWN');
          await handle.executeUpdate(resolveCallUpdate, {
            args: [{ ...who, outcome: 'FAILED', reason: 'wallet has no such debit' }],
          });
        },
        { services: { wallet: wallet.url } },
      );
      const resolved = out.ledger.events.filter((e) => e.type === 'ToolEffectReconciled');
      expect(resolved).toEqual([
        expect.objectContaining({
          via: 'operator',
          outcome: 'FAILED',
          detail: 'ops:bob: wallet has no such debit',
          evidence: expect.objectContaining({ lookup: 'sealed', service: 'wallet', checkedAt: expect.any(String) }),
        }),
      ]);
      expect(out.ledger.projection.violations).toEqual([]);
    } finally {
      await wallet.stop();
      await back?.stop();
    }
  });

  test('without an operator the run stops at its deadline with outcome_unknown, the call still UNKNOWN', async () => {
    const { wallet, client } = await doomedWallet();
    try {
      const out = await runAgent(
        stack,
        'deadline',
        input({
          strategy: 'same_key_replay',
          deadlineAt: deadlineIn(15_000),
          caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000, recoveryReserveMs: 3_000 },
          limits: { tool: 2, reconcile: 2 },
        }),
        async (handle) => {
          const key = await operationKey(handle);
          await waitFor(async () => ((await client.stats(key)).businessEffectCount === 1 ? true : undefined));
          await wallet.stop(); // the effect exists, and now nobody can say so
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
