/**
 * A decision the workflow made from its held policy is signed by the dispatch activity only while that policy is
 * still current and the decision still valid; otherwise nothing is signed (and so nothing is sent).
 */
import { randomBytes } from 'node:crypto';
import { signAtDispatch } from '../../activities/authorize.activities';
import { capabilityClaims, type AuthorizationInput, type DispatchAuthorization } from '../../src/policy/authorization';
import { verifyCapability } from '../../src/policy/capability';
import { evaluate } from '../../src/policy/evaluate';
import { DEFAULT_POLICY, type Policy } from '../../src/policy/policy-format';
import { policyDigest, StaticPolicyStore } from '../../src/policy/policy-store';

const key = randomBytes(32);
const NOW = Date.parse('2026-01-01T00:00:00Z');
const input: AuthorizationInput = {
  principalId: 'user:alice',
  tenant: 'acme',
  logicalCallId: 'lc_1_abc',
  operationKey: `op_${'a'.repeat(40)}`,
  argumentsHash: 'h'.repeat(64),
  toolName: 'wallet_debit',
  scope: 'wallet.charge',
  request: { action: 'wallet.debit', resource: 'acme/account/acct_1', resourceTenant: 'acme', amountMinor: 1250, currency: 'EUR' },
  origin: 'model',
  toolApprovalReason: null,
  recentDispatches: [],
  keyMode: 'exact',
  nowMs: NOW,
};

function decided(policy: Policy): DispatchAuthorization {
  const d = evaluate(policy, input);
  if (d.kind !== 'allowed') throw new Error(`expected allowed, got ${d.kind}`);
  return { claims: capabilityClaims(input, d), policyDigest: policyDigest(policy), chain: d.chain, reason: d.reason, issuedAt: d.issuedAt };
}

test('the held policy is still current: the capability is signed for exactly the decided call', () => {
  const auth = decided(DEFAULT_POLICY);
  const token = signAtDispatch({ policies: new StaticPolicyStore(DEFAULT_POLICY), capabilityKey: key }, auth, NOW + 10);
  const claims = verifyCapability(token, key, { key: input.operationKey, argumentsHash: input.argumentsHash, tenant: 'acme', scope: 'wallet.charge', nowMs: NOW + 10 });
  expect(claims).toMatchObject({ policyVersion: DEFAULT_POLICY.version, action: 'wallet.debit' });
});

test('a new policy version since the decision: Authorization.Stale, nothing signed', () => {
  const auth = decided(DEFAULT_POLICY);
  const now = { ...DEFAULT_POLICY, version: 'acme/next' };
  expect(() => signAtDispatch({ policies: new StaticPolicyStore(now), capabilityKey: key }, auth, NOW + 10)).toThrow(
    expect.objectContaining({ type: 'Authorization.Stale', nonRetryable: true }),
  );
});

test('the same version with other rules (an edit without a bump) is stale too: the digest binds the content', () => {
  const auth = decided(DEFAULT_POLICY);
  const edited: Policy = { ...DEFAULT_POLICY, rules: DEFAULT_POLICY.rules.filter((r) => r.action !== 'wallet.debit') };
  expect(edited.version).toBe(DEFAULT_POLICY.version);
  expect(() => signAtDispatch({ policies: new StaticPolicyStore(edited), capabilityKey: key }, auth, NOW + 10)).toThrow(
    expect.objectContaining({ type: 'Authorization.Stale' }),
  );
});

test('a decision past (or within a second of) its expiry: Authorization.Expired, nothing signed', () => {
  const auth = decided(DEFAULT_POLICY);
  const expiry = Date.parse(auth.claims.expiresAt);
  expect(() => signAtDispatch({ policies: new StaticPolicyStore(DEFAULT_POLICY), capabilityKey: key }, auth, expiry - 500)).toThrow(
    expect.objectContaining({ type: 'Authorization.Expired' }),
  );
});

test('a worker without the signing key signs nothing (the downstream then refuses the call)', () => {
  expect(signAtDispatch({ policies: new StaticPolicyStore(DEFAULT_POLICY) }, decided(DEFAULT_POLICY), NOW + 10)).toBeUndefined();
});
