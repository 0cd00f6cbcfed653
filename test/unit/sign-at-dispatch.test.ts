/**
 * The signer signs nothing it was merely handed: it re-derives the call from the request body and the tool
 * declaration, checks that the workflow's decision names exactly that call, re-evaluates the current policy, and
 * only then signs a capability for one attempt at one service. Otherwise nothing is signed (and nothing is sent).
 */
import { createHash } from 'node:crypto';
import { signAtDispatch } from '../../activities/authorize.activities';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import {
  dispatchAuthorization,
  type AuthorizationInput,
  type DispatchAuthorization,
} from '../../src/domain/authorization';
import { verifyCapability } from '../../src/capability/capability';
import { CapabilityKeySet, generateSigningKey, publicJwkOf } from '../../src/capability/capability-keys';
import { evaluate } from '../../src/policy/evaluate';
import { DEFAULT_POLICY, type Policy } from '../../src/domain/policy-format';
import { policyDigest, StaticPolicyStore } from '../../src/stores/policy-store';

const key = generateSigningKey('dispatch-test');
const trusted = () => new CapabilityKeySet([publicJwkOf(key)]);
const NOW = Date.parse('2026-01-01T00:00:00Z');
const OP = `op_${'a'.repeat(40)}`;
const bodyOf = (minor: number, tenant = 'acme'): Json => ({
  tenant,
  account: 'acct_1',
  amount: { minor, currency: 'EUR' },
});

function inputFor(body: Json, over: Partial<AuthorizationInput> = {}): AuthorizationInput {
  const b = body as { tenant: string; amount: { minor: number; currency: string } };
  return {
    principalId: 'user:alice',
    tenant: 'acme',
    logicalCallId: 'lc_1_abc',
    operationKey: OP,
    argumentsHash: hashCanonical(body),
    toolName: 'wallet_debit',
    scope: 'wallet.charge',
    request: {
      action: 'wallet.debit',
      resource: `${b.tenant}/account/acct_1`,
      resourceTenant: b.tenant,
      amountMinor: b.amount.minor,
      currency: b.amount.currency,
    },
    origin: 'model',
    toolApprovalReason: null,
    recentDispatches: [],
    keyMode: 'exact',
    nowMs: NOW,
    ...over,
  };
}

function decided(policy: Policy, input: AuthorizationInput): DispatchAuthorization {
  const d = evaluate(policy, input);
  if (d.kind !== 'allowed') throw new Error(`expected allowed, got ${d.kind}`);
  return dispatchAuthorization({ document: policy, digest: policyDigest(policy) }, d);
}

function requestFor(
  body: Json,
  authorization: DispatchAuthorization,
  over: Partial<DispatchRequest> = {},
): DispatchRequest {
  return {
    intent: {
      runId: 'run-1',
      providerCallId: 'call_1',
      logicalCallId: 'lc_1_abc',
      operationKey: OP,
      toolName: 'wallet_debit',
      toolVersion: 1,
      argumentsHash: hashCanonical(body),
      principalId: 'user:alice',
      tenant: 'acme',
      policyVersion: DEFAULT_POLICY.version,
      deadlineAt: new Date(NOW + 600_000).toISOString(),
    },
    service: 'wallet',
    route: '/v1/debits',
    body,
    strategy: 'same_key_replay',
    dispatch: 1,
    keyUsed: OP,
    authorization,
    intentRecordedAt: new Date(NOW).toISOString(),
    idempotency: 'idempotent_by_key',
    ...over,
  };
}

const deps = (policy: Policy = DEFAULT_POLICY) => ({ policies: new StaticPolicyStore(policy), capabilityKey: key });
const verifyReq = (body: Json) => ({
  key: OP,
  argumentsHash: hashCanonical(body),
  tenant: 'acme',
  scope: 'wallet.charge',
  audience: 'wallet',
  nowMs: NOW + 10,
});
const refusedAs = (type: string) => expect.objectContaining({ type, nonRetryable: true });

test('the held policy is still current: a capability is signed for exactly the decided call, for the wallet only', () => {
  const body = bodyOf(1250);
  const signed = signAtDispatch(deps(), requestFor(body, decided(DEFAULT_POLICY, inputFor(body))), NOW + 10);
  expect(signed).toBeDefined();
  const claims = verifyCapability(signed!.token, trusted(), verifyReq(body));
  expect(claims).toMatchObject({
    policyVersion: DEFAULT_POLICY.version,
    action: 'wallet.debit',
    amountMinor: 1250,
    currency: 'EUR',
    aud: 'wallet',
  });
  expect(signed!.record).toEqual({
    capabilityDigest: createHash('sha256').update(signed!.token).digest('hex'),
    kid: 'dispatch-test',
    jti: claims.jti,
    aud: 'wallet',
    exp: claims.exp,
  });
  expect(() => verifyCapability(signed!.token, trusted(), { ...verifyReq(body), audience: 'inventory' })).toThrow(
    'not inventory',
  );
});

test('every attempt gets a fresh token (a fresh jti): a same-key retry is not a replay', () => {
  const body = bodyOf(1250);
  const req = requestFor(body, decided(DEFAULT_POLICY, inputFor(body)));
  const a = signAtDispatch(deps(), req, NOW + 10)!;
  const b = signAtDispatch(deps(), req, NOW + 20)!;
  expect(a.record.jti).not.toBe(b.record.jti);
  const set = trusted();
  verifyCapability(a.token, set, verifyReq(body));
  expect(verifyCapability(b.token, set, verifyReq(body)).operationKey).toBe(OP);
});

test('a new policy version since the decision: Authorization.Stale, nothing signed', () => {
  const body = bodyOf(1250);
  const now = { ...DEFAULT_POLICY, version: 'acme/next' };
  expect(() => signAtDispatch(deps(now), requestFor(body, decided(DEFAULT_POLICY, inputFor(body))), NOW + 10)).toThrow(
    refusedAs('Authorization.Stale'),
  );
});

test('the same version with other rules (an edit without a bump) is stale too: the digest binds the content', () => {
  const body = bodyOf(1250);
  const edited: Policy = { ...DEFAULT_POLICY, rules: DEFAULT_POLICY.rules.filter((r) => r.action !== 'wallet.debit') };
  expect(edited.version).toBe(DEFAULT_POLICY.version);
  expect(() =>
    signAtDispatch(deps(edited), requestFor(body, decided(DEFAULT_POLICY, inputFor(body))), NOW + 10),
  ).toThrow(refusedAs('Authorization.Stale'));
});

test('a decision past (or within a second of) its expiry: Authorization.Expired, nothing signed', () => {
  const body = bodyOf(1250);
  const auth = decided(DEFAULT_POLICY, inputFor(body));
  expect(() => signAtDispatch(deps(), requestFor(body, auth), Date.parse(auth.expiresAt) - 500)).toThrow(
    refusedAs('Authorization.Expired'),
  );
});

test('a worker without the signing key signs nothing (the downstream then refuses the call), after the same checks', () => {
  const body = bodyOf(1250);
  expect(
    signAtDispatch(
      { policies: new StaticPolicyStore(DEFAULT_POLICY) },
      requestFor(body, decided(DEFAULT_POLICY, inputFor(body))),
      NOW + 10,
    ),
  ).toBeUndefined();
});

describe('the signer signs the call it derives from the request, never what it is told of it: Capability.ClaimsMismatch', () => {
  const body = bodyOf(1250);
  const auth = decided(DEFAULT_POLICY, inputFor(body));

  test('the control: the decided call is signed', () => {
    expect(signAtDispatch(deps(), requestFor(body, auth), NOW + 10)).toBeDefined();
  });

  test('a body other than the decided one (the intent hash still the decided one)', () => {
    const other = bodyOf(99_000);
    expect(() =>
      signAtDispatch(deps(), { ...requestFor(other, auth), intent: requestFor(body, auth).intent }, NOW + 10),
    ).toThrow(refusedAs('Capability.ClaimsMismatch'));
  });

  test.each<[string, (r: DispatchRequest) => DispatchRequest]>([
    ['an intent of another tenant than its body', (r) => ({ ...r, intent: { ...r.intent, tenant: 'globex' } })],
    ['an intent under another policy version', (r) => ({ ...r, intent: { ...r.intent, policyVersion: 'p/other' } })],
    ['a key other than the intent operation key', (r) => ({ ...r, keyUsed: `${OP}~retry2` })],
    ['an intent of another tool', (r) => ({ ...r, intent: { ...r.intent, toolName: 'wallet_refund' } })],
  ])('%s', (_, change) => {
    expect(() => signAtDispatch(deps(), change(requestFor(body, auth)), NOW + 10)).toThrow(
      refusedAs('Capability.ClaimsMismatch'),
    );
  });

  test('another service or route than the tool declares', () => {
    expect(() => signAtDispatch(deps(), requestFor(body, auth, { service: 'inventory' }), NOW + 10)).toThrow(
      refusedAs('Capability.ClaimsMismatch'),
    );
    expect(() => signAtDispatch(deps(), requestFor(body, auth, { route: '/v1/refunds' }), NOW + 10)).toThrow(
      refusedAs('Capability.ClaimsMismatch'),
    );
  });

  test('a body that is not the canonical form of a call of the tool', () => {
    const extra = { ...(body as object), note: 'x' } as Json;
    expect(() => signAtDispatch(deps(), requestFor(extra, auth), NOW + 10)).toThrow(
      refusedAs('Capability.ClaimsMismatch'),
    );
  });
});

describe('the signer re-evaluates the policy for the derived call', () => {
  test('a consistent claim set the policy would deny (an amount over the limit) is refused', () => {
    const big = bodyOf(500_000);
    // A forged "allowed" for the current policy, as a workflow (or anyone) could hand it.
    const input = inputFor(big);
    const forged: DispatchAuthorization = {
      policyDigest: policyDigest(DEFAULT_POLICY),
      expiresAt: new Date(NOW + 60_000).toISOString(),
    };
    expect(evaluate(DEFAULT_POLICY, input).kind).toBe('denied');
    expect(() => signAtDispatch(deps(), requestFor(big, forged), NOW + 10)).toThrow(
      refusedAs('Capability.ClaimsMismatch'),
    );
  });

  test('a call over the approval threshold signs only with an approver named by the decision', () => {
    const large = bodyOf(60_000);
    const base = { policyDigest: policyDigest(DEFAULT_POLICY), expiresAt: new Date(NOW + 60_000).toISOString() };
    expect(() => signAtDispatch(deps(), requestFor(large, base), NOW + 10)).toThrow(
      refusedAs('Capability.ClaimsMismatch'),
    );
    expect(signAtDispatch(deps(), requestFor(large, { ...base, approvedBy: 'manager:carol' }), NOW + 10)).toBeDefined();
  });

  test('a compensation-only action proposed by the model is refused (the origin comes from the intent)', () => {
    const body: Json = {
      tenant: 'acme',
      account: 'acct_1',
      amount: { minor: 100, currency: 'EUR' },
      debitOperationKey: OP,
    };
    const over = {
      toolName: 'wallet_refund',
      scope: 'wallet.refund',
      request: {
        action: 'wallet.refund',
        resource: 'acme/account/acct_1',
        resourceTenant: 'acme',
        amountMinor: 100,
        currency: 'EUR',
      },
    };
    const input = inputFor(body, { ...over, origin: 'compensation' });
    const auth = decided(DEFAULT_POLICY, input);
    const req = requestFor(body, auth, { route: '/v1/refunds' });
    const asModel = { ...req, intent: { ...req.intent, toolName: 'wallet_refund' } };
    expect(() => signAtDispatch(deps(), asModel, NOW + 10)).toThrow(refusedAs('Capability.ClaimsMismatch'));
    const asSaga = { ...asModel, intent: { ...asModel.intent, providerCallId: 'saga' } };
    expect(signAtDispatch(deps(), asSaga, NOW + 10)).toBeDefined();
  });
});
