import { randomBytes } from 'node:crypto';
import { CapabilityError, signCapability, verifyCapability, type CapabilityClaims } from '../../src/policy/capability';

const key = randomBytes(32);
const NOW = Date.parse('2026-01-01T00:00:00Z');
const claims: CapabilityClaims = {
  v: 1,
  operationKey: 'op_abc',
  keyMode: 'exact',
  argumentsHash: 'h1',
  tenant: 'acme',
  principalId: 'user:alice',
  scope: 'wallet.charge',
  action: 'wallet.debit',
  resource: 'acme/account/acct_1',
  policyVersion: 'p/1',
  expiresAt: new Date(NOW + 60_000).toISOString(),
};
const req = { key: 'op_abc', argumentsHash: 'h1', tenant: 'acme', scope: 'wallet.charge', nowMs: NOW };

describe('capabilities are narrow, expiring and signed', () => {
  test('a capability verifies for exactly its call', () => {
    expect(verifyCapability(signCapability(claims, key), key, req)).toEqual(claims);
  });
  test.each<[string, Partial<typeof req>]>([
    ['another key', { key: 'op_other' }],
    ['other arguments', { argumentsHash: 'h2' }],
    ['another tenant', { tenant: 'globex' }],
    ['another effect scope', { scope: 'wallet.refund' }],
    ['after expiry', { nowMs: NOW + 60_000 }],
    ['a derived key under an exact capability', { key: 'op_abc~retry2' }],
  ])('is refused for %s', (_n, over) => {
    expect(() => verifyCapability(signCapability(claims, key), key, { ...req, ...over })).toThrow(CapabilityError);
  });
  test('a forged or missing signature is refused', () => {
    const token = signCapability(claims, key);
    expect(() => verifyCapability(token, randomBytes(32), req)).toThrow('signature');
    expect(() => verifyCapability(undefined, key, req)).toThrow('required');
    const tampered = signCapability({ ...claims, tenant: 'globex' }, key).split('.')[0] + '.' + token.split('.')[1];
    expect(() => verifyCapability(tampered, key, { ...req, tenant: 'globex' })).toThrow('signature');
  });
  test('only the naive strategy’s derived capability accepts its fresh per-attempt keys', () => {
    const token = signCapability({ ...claims, keyMode: 'derived' }, key);
    expect(verifyCapability(token, key, { ...req, key: 'op_abc~a2' }).keyMode).toBe('derived');
  });
});
