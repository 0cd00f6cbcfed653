import { DEFAULT_POLICY, evaluatePolicy } from '../../src/domain/policy';

const who = { principalId: 'user:alice', tenant: 'acme' };
const debit = (over: object = {}) => ({ action: 'wallet.debit', resource: 'acme/account/acct_1', resourceTenant: 'acme', amountMinor: 1250, currency: 'EUR', ...over });

describe('policy evaluated at dispatch', () => {
  test('an in-limit debit in the own tenant is allowed, with version and expiry bound', () => {
    const d = evaluatePolicy(DEFAULT_POLICY, who, debit(), Date.parse('2026-01-01T00:00:00Z'));
    expect(d).toMatchObject({ allowed: true, policyVersion: DEFAULT_POLICY.version, issuedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:01:00.000Z' });
  });
  test.each([
    ['another tenant', debit({ resourceTenant: 'globex', resource: 'globex/account/acct_1' })],
    ['over the limit', debit({ amountMinor: 100_001 })],
    ['another currency', debit({ currency: 'USD' })],
    ['an action no rule names', debit({ action: 'wallet.transfer' })],
  ])('%s is denied', (_n, req) => {
    expect(evaluatePolicy(DEFAULT_POLICY, who, req, 0).allowed).toBe(false);
  });
});
