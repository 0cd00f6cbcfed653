/**
 * The wallet commits and then drops the connection: the worker is alive but never sees the response.
 * The call is UNKNOWN until reconciled; the safe strategies end with one charge, the naive one with two.
 */
import type { Stack } from '../../lab/stack';
import type { RetryStrategy } from '../../src/domain/run';
import { eventTypes, input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('lost');
});
afterAll(async () => {
  await stack?.stop();
});

async function lostDebit(strategy: RetryStrategy, account: string) {
  await stack.walletClient.seedAccount({ tenant: 'acme', account, balanceMinor: 10_000, currency: 'EUR' });
  await stack.walletClient.armFault({ at: 'after_commit', do: 'drop_response', path: '/v1/debits', occurrence: 1 });
  const out = await runAgent(
    stack,
    `lost-${strategy}`,
    input({ strategy, vars: { account, amount: { minor: 1250, currency: 'EUR' } } }),
  );
  const key = out.result.calls[0]?.operationKey ?? '';
  const stats = await stack.walletClient.stats(key, { prefix: true });
  const balance = await stack.walletClient.balance('acme', account);
  await stack.walletClient.clearFaults();
  return { ...out, key, stats, balance };
}

describe('a lost debit response (committed, connection dropped)', () => {
  test('same_key_replay: the retry under the same key returns the retained result and charges once', async () => {
    const r = await lostDebit('same_key_replay', 'acct_same');
    expect(r.stats.businessEffectCount).toBe(1);
    expect(r.stats.dispatchCount).toBe(2);
    expect(r.dispatchAttempts).toBeGreaterThanOrEqual(2);
    expect(r.balance?.minor).toBe(10_000 - 1250);
    expect(r.result.stopReason).toBe('completed');
    expect(eventTypes(r.ledger)).toEqual(expect.arrayContaining(['ToolOutcomeMarkedUnknown', 'ToolEffectReconciled']));
    const reconciled = r.ledger.events.find((e) => e.type === 'ToolEffectReconciled');
    expect(reconciled).toMatchObject({ via: 'same_key_replay', outcome: 'SUCCEEDED' });
  });

  test('check_receipt: the retry asks for the receipt first and sends nothing again', async () => {
    const r = await lostDebit('check_receipt', 'acct_check');
    expect(r.stats.businessEffectCount).toBe(1);
    expect(r.stats.dispatchCount).toBe(1);
    expect(r.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({
      via: 'receipt_lookup',
      outcome: 'SUCCEEDED',
    });
    expect(r.result.calls[0]?.state).toBe('SUCCEEDED');
  });

  test('blind_retry: a fresh key per attempt charges twice', async () => {
    const r = await lostDebit('blind_retry', 'acct_blind');
    expect(r.stats.businessEffectCount).toBe(2);
    expect(r.balance?.minor).toBe(10_000 - 2 * 1250);
  });

  test('the projection hash in the ledger is the reducer applied to its own events', async () => {
    const r = await lostDebit('same_key_replay', 'acct_hash');
    const { reduce, projectionHash } = await import('../../src/domain/reducer');
    expect(projectionHash(reduce(r.ledger.events, r.ledger.reducerVersion))).toBe(r.ledger.projectionHash);
    expect(r.ledger.projection.violations).toEqual([]);
  });
});
