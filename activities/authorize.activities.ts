/**
 * The authorizer: evaluates the CURRENT policy immediately before dispatch and, for an allowed decision, signs
 * a capability for exactly that call. Runs as a local activity (no extra round trip through the server);
 * it holds the signing key, the workflow never does. Asked with `includePolicy`, it also returns the policy it
 * decided under (document and digest), so the workflow can decide the run's next calls itself; the dispatch
 * activity then signs only while the current policy still has that digest (`signAtDispatch`).
 */
import { ApplicationFailure } from '@temporalio/activity';
import { capabilityClaims, type AuthorizationInput, type AuthorizerResult, type DispatchAuthorization } from '../src/policy/authorization';
import { lapsesBeforeSend, signCapability, type CapabilityClaims } from '../src/policy/capability';
import { LOOKUP_ARGUMENTS_HASH, lookupCapabilityScope } from '../src/downstream/protocol';
import { evaluate } from '../src/policy/evaluate';
import { Failure } from '../src/domain/failures';
import type { Policy } from '../src/policy/policy-format';
import { policyDigest, PolicyFileError, StaticPolicyStore, type PolicyStore } from '../src/policy/policy-store';

export interface AuthorizeDeps {
  readonly policies: PolicyStore;
  /** HMAC key shared with the downstream services; without it no capability is issued. */
  readonly capabilityKey?: Buffer;
}

/** The worker's policy store and signing key, with the defaults: the built-in policy, no signing key. */
export function resolveAuthorizeDeps(partial: Partial<AuthorizeDeps> | undefined): AuthorizeDeps {
  return {
    policies: partial?.policies ?? new StaticPolicyStore(),
    ...(partial?.capabilityKey ? { capabilityKey: partial.capabilityKey } : {}),
  };
}

function currentPolicy(store: PolicyStore): Policy {
  try {
    return store.current();
  } catch (err) {
    if (err instanceof PolicyFileError) throw ApplicationFailure.nonRetryable(err.message, err.name);
    throw err;
  }
}

/**
 * Sign, at the instant of dispatch, a decision the workflow made from a held policy: only if the current policy
 * is the one it was made under, and only while it is valid. Otherwise nothing is sent and the workflow decides
 * again (`Authorization.Stale` / `Authorization.Expired`, both proven no-effect). Returns the capability, or
 * undefined when this worker holds no signing key (the downstream then refuses the call).
 */
export function signAtDispatch(deps: AuthorizeDeps, auth: DispatchAuthorization, nowMs: number): string | undefined {
  const current = currentPolicy(deps.policies);
  const digest = policyDigest(current);
  if (digest !== auth.policyDigest) {
    throw ApplicationFailure.nonRetryable(
      `the policy changed after the decision (${auth.claims.policyVersion} -> ${current.version}): decide again`,
      Failure.AuthorizationStale,
    );
  }
  if (lapsesBeforeSend(auth.claims.expiresAt, nowMs)) {
    throw ApplicationFailure.nonRetryable('the decision for this call expired before dispatch', Failure.AuthorizationExpired);
  }
  return deps.capabilityKey ? signCapability(auth.claims, deps.capabilityKey) : undefined;
}

/** How long a lookup or seal capability is valid: one request, sent at once. */
export const LOOKUP_CAPABILITY_TTL_MS = 60_000;

/** The one lookup or seal a reconciliation may make: exactly this key, at this service, for this tenant. */
export interface LookupGrant {
  readonly service: string;
  readonly operationKey: string;
  readonly tenant: string;
  readonly principalId: string;
  readonly policyVersion: string;
  readonly seal: boolean;
}

/**
 * Sign, at the dispatch side, a capability for one lookup (`lookup:<service>`) or seal (`seal:<service>`) of
 * exactly `grant.operationKey` for `grant.tenant`, valid for a minute. The service refuses a lookup or seal for
 * any other key, tenant or service. Returns undefined when this worker holds no signing key (the service then
 * refuses). The only place lookup capabilities are signed.
 */
export function signLookupAtDispatch(deps: AuthorizeDeps, grant: LookupGrant, nowMs: number): string | undefined {
  if (!deps.capabilityKey) return undefined;
  const claims: CapabilityClaims = {
    v: 1,
    operationKey: grant.operationKey,
    keyMode: 'exact',
    argumentsHash: LOOKUP_ARGUMENTS_HASH,
    tenant: grant.tenant,
    principalId: grant.principalId,
    scope: lookupCapabilityScope(grant.service, grant.seal),
    action: grant.seal ? 'seal' : 'lookup',
    resource: `${grant.service}/operations/${grant.operationKey}`,
    policyVersion: grant.policyVersion,
    expiresAt: new Date(nowMs + LOOKUP_CAPABILITY_TTL_MS).toISOString(),
  };
  return signCapability(claims, deps.capabilityKey);
}

export function createAuthorizeActivities(deps: AuthorizeDeps) {
  async function authorizeCall(input: AuthorizationInput & { readonly includePolicy?: boolean }): Promise<AuthorizerResult> {
    const { includePolicy, ...rest } = input;
    const policy = currentPolicy(deps.policies);
    const held = includePolicy ? { policy: { document: policy, digest: policyDigest(policy) } } : {};
    const decision = evaluate(policy, rest);
    if (decision.kind !== 'allowed' || !deps.capabilityKey) return { ...decision, ...held };
    return { ...decision, capability: signCapability(capabilityClaims(rest, decision), deps.capabilityKey), ...held };
  }
  return { authorizeCall };
}
