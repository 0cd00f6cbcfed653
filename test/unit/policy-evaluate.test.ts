import type { AuthorizationInput } from '../../src/domain/authorization';
import { evaluate } from '../../src/policy/evaluate';
import { DEFAULT_POLICY, Policy } from '../../src/domain/policy-format';

const NOW = Date.parse('2026-01-01T00:00:00Z');
function input(
  over: Partial<AuthorizationInput> = {},
  req: Partial<AuthorizationInput['request']> = {},
): AuthorizationInput {
  return {
    principalId: 'user:alice',
    tenant: 'acme',
    logicalCallId: 'lc_1_a',
    operationKey: 'op_a',
    argumentsHash: 'h1',
    toolName: 'wallet_debit',
    scope: 'wallet.charge',
    request: {
      action: 'wallet.debit',
      resource: 'acme/account/acct_1',
      resourceTenant: 'acme',
      amountMinor: 1250,
      currency: 'EUR',
      ...req,
    },
    origin: 'model',
    toolApprovalReason: null,
    recentDispatches: [],
    keyMode: 'exact',
    nowMs: NOW,
    ...over,
  };
}
const grant = (over: object = {}) => ({
  logicalCallId: 'lc_1_a',
  argumentsHash: 'h1',
  policyVersion: DEFAULT_POLICY.version,
  approver: 'manager:carol',
  grantedAt: new Date(NOW - 1000).toISOString(),
  expiresAt: new Date(NOW + 60_000).toISOString(),
  ...over,
});

describe('policy evaluation at dispatch', () => {
  test('an in-limit debit in the own tenant is allowed, bound to version and expiry', () => {
    const d = evaluate(DEFAULT_POLICY, input());
    expect(d).toMatchObject({
      kind: 'allowed',
      policyVersion: DEFAULT_POLICY.version,
      issuedAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-01-01T00:01:00.000Z',
      chain: ['user:alice'],
    });
  });

  test.each<[string, Partial<AuthorizationInput>, Partial<AuthorizationInput['request']>, string]>([
    [
      'a resource of another tenant',
      {},
      { resourceTenant: 'globex', resource: 'globex/account/acct_1' },
      'Tenant.Mismatch',
    ],
    ['an amount over the limit', {}, { amountMinor: 100_001 }, 'Authorization.Denied'],
    ['another currency', {}, { currency: 'USD' }, 'Authorization.Denied'],
    ['an action no rule names', {}, { action: 'wallet.transfer' }, 'Authorization.Denied'],
    [
      'a refund the model proposed (refunds are compensations only)',
      {},
      { action: 'wallet.refund' },
      'Authorization.Denied',
    ],
  ])('%s is denied', (_n, over, req, code) => {
    const d = evaluate(DEFAULT_POLICY, input(over, req));
    expect(d.kind).toBe('denied');
    expect(d.kind === 'denied' && d.code).toBe(code);
  });

  test('the same refund as the run’s own compensation is allowed', () => {
    expect(evaluate(DEFAULT_POLICY, input({ origin: 'compensation' }, { action: 'wallet.refund' })).kind).toBe(
      'allowed',
    );
  });

  test('an amount over the approval threshold needs a human approval of this exact call', () => {
    expect(evaluate(DEFAULT_POLICY, input({}, { amountMinor: 60_000 })).kind).toBe('approval_required');
    const ok = evaluate(DEFAULT_POLICY, input({ approval: grant() }, { amountMinor: 60_000 }));
    expect(ok).toMatchObject({ kind: 'allowed', chain: ['user:alice', 'approved-by:manager:carol'] });
    // the decision never outlives the approval it rests on
    expect(ok.kind === 'allowed' && ok.expiresAt).toBe(new Date(NOW + 60_000).toISOString());
  });

  test.each([
    ['expired', grant({ expiresAt: new Date(NOW - 1).toISOString() }), 'expired'],
    ['given under another policy version', grant({ policyVersion: 'ledgerloop-default/0' }), 'policy is now'],
    ['for other arguments', grant({ argumentsHash: 'h2' }), 'another call'],
  ])('an approval that is %s forces a new decision', (_n, g, why) => {
    const d = evaluate(DEFAULT_POLICY, input({ approval: g }, { amountMinor: 60_000 }));
    expect(d.kind).toBe('approval_required');
    expect(d.kind === 'approval_required' && d.invalidated).toContain(why);
  });

  test('an irreversible tool needs approval whatever the amount', () => {
    expect(evaluate(DEFAULT_POLICY, input({ toolApprovalReason: 'an email cannot be unsent' })).kind).toBe(
      'approval_required',
    );
  });

  test('a rate limit defers the dispatch until its window opens', () => {
    const policy = Policy.parse({
      version: 'rl/1',
      rules: [{ action: 'wallet.debit', rateLimit: { max: 1, perMs: 60_000 } }],
    });
    const d = evaluate(policy, input({ recentDispatches: [NOW - 10_000] }));
    expect(d).toMatchObject({ kind: 'rate_limited', retryAfterMs: 50_000 });
    expect(evaluate(policy, input({ recentDispatches: [NOW - 70_000] })).kind).toBe('allowed');
  });

  test('a policy file that does not match the format is refused with the field named', () => {
    const r = Policy.safeParse({ version: 'x/1', rules: [{ action: 'wallet.debit', maxAmountMinor: -1 }] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['rules', 0, 'maxAmountMinor']);
  });
});
