import { blindRetryKey } from '../../lab/strategies';
import { deriveLogicalCallId, deriveOperationKey } from '../../src/domain/operation-key';
import { hashCanonical } from '../../src/domain/canonical';
import { walletDebit } from '../../src/tools/wallet.tool';

const ctx = { tenant: 'acme', principalId: 'user:alice' };
const argsHash = (args: unknown) => hashCanonical(walletDebit.canonicalize(walletDebit.args.parse(args), ctx));
const base = { tenant: 'acme', runId: 'order-1001', toolName: 'wallet_debit', toolVersion: 1, occurrence: 0 };

describe('operation keys', () => {
  test('the key depends on the canonical arguments, not on how the model spelled them', () => {
    const a = argsHash({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } });
    const b = argsHash({ amount: { currency: 'EUR', minor: 1250 }, account: 'acct_1' });
    expect(a).toBe(b);
    expect(deriveOperationKey({ ...base, argumentsHash: a })).toBe(deriveOperationKey({ ...base, argumentsHash: b }));
  });

  test('a regenerated model turn with new provider call ids keeps the operation key', () => {
    // The provider call id is not an input of the key at all: the same intent always derives the same key.
    const h = argsHash({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } });
    const k1 = deriveOperationKey({ ...base, argumentsHash: h });
    const k2 = deriveOperationKey({ ...base, argumentsHash: h });
    expect(k1).toBe(k2);
    expect(k1).toMatch(/^op_[0-9a-f]{40}$/);
  });

  test('other arguments, tenant, run, tool version or occurrence give another key', () => {
    const h = argsHash({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } });
    const k = deriveOperationKey({ ...base, argumentsHash: h });
    const variants = [
      { ...base, argumentsHash: argsHash({ account: 'acct_1', amount: { minor: 1251, currency: 'EUR' } }) },
      { ...base, argumentsHash: h, tenant: 'globex' },
      { ...base, argumentsHash: h, runId: 'order-1002' },
      { ...base, argumentsHash: h, toolVersion: 2 },
      { ...base, argumentsHash: h, occurrence: 1 },
    ];
    for (const v of variants) expect(deriveOperationKey(v)).not.toBe(k);
  });

  test('logical call ids are not array positions: the same proposal in another position keeps its id', () => {
    const h = argsHash({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } });
    const id = deriveLogicalCallId({
      runId: 'r',
      turn: 1,
      toolName: 'wallet_debit',
      argumentsHash: h,
      occurrenceInTurn: 0,
    });
    expect(id).toBe(
      deriveLogicalCallId({ runId: 'r', turn: 1, toolName: 'wallet_debit', argumentsHash: h, occurrenceInTurn: 0 }),
    );
    expect(id).toMatch(/^lc_1_[0-9a-f]{12}$/);
  });

  test('the naive strategy uses a fresh key per dispatch (the bug it demonstrates)', () => {
    expect(blindRetryKey('op_x', 1)).toBe('op_x');
    expect(blindRetryKey('op_x', 2)).not.toBe('op_x');
    // both retry levels in one place: a Temporal retry of a re-dispatch gets yet another key
    expect(blindRetryKey('op_x', 1, 2)).toBe('op_x~a2');
    expect(blindRetryKey('op_x', 2, 3)).toBe('op_x~retry2~a3');
    expect(
      new Set([
        blindRetryKey('op_x', 1),
        blindRetryKey('op_x', 1, 2),
        blindRetryKey('op_x', 2),
        blindRetryKey('op_x', 2, 2),
      ]).size,
    ).toBe(4);
  });
});

describe('wallet canonicalization is domain work', () => {
  test('money stays integer minor units with an explicit currency, and the tenant is bound in', () => {
    const body = walletDebit.canonicalize(
      walletDebit.args.parse({ account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } }),
      ctx,
    );
    expect(body).toEqual({ tenant: 'acme', account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } });
  });

  test.each([
    ['a float amount', { account: 'acct_1', amount: { minor: 12.5, currency: 'EUR' } }],
    ['a lower-case currency', { account: 'acct_1', amount: { minor: 1250, currency: 'eur' } }],
    ['a negative amount', { account: 'acct_1', amount: { minor: -5, currency: 'EUR' } }],
    ['an extra field', { account: 'acct_1', amount: { minor: 1, currency: 'EUR' }, tenant: 'globex' }],
  ])('the schema rejects %s', (_n, args) => {
    expect(walletDebit.args.safeParse(args).success).toBe(false);
  });
});
