/**
 * The authorizer: evaluates the CURRENT policy immediately before dispatch and, for an allowed decision, signs
 * a capability for exactly that call. Runs as a local activity (no extra round trip through the server);
 * it holds the signing key, the workflow never does.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { AuthorizationDecision, AuthorizationInput } from '../src/policy/authorization';
import { signCapability } from '../src/policy/capability';
import { evaluate } from '../src/policy/evaluate';
import { PolicyFileError, type PolicyStore } from '../src/policy/policy-store';

export interface AuthorizeDeps {
  readonly policies: PolicyStore;
  /** HMAC key shared with the downstream services; without it no capability is issued. */
  readonly capabilityKey?: Buffer;
}

export function createAuthorizeActivities(deps: AuthorizeDeps) {
  async function authorizeCall(input: AuthorizationInput): Promise<AuthorizationDecision> {
    let policy;
    try {
      policy = deps.policies.current();
    } catch (err) {
      if (err instanceof PolicyFileError) throw ApplicationFailure.nonRetryable(err.message, err.name);
      throw err;
    }
    const decision = evaluate(policy, input);
    if (decision.kind !== 'allowed' || !deps.capabilityKey) return decision;
    const capability = signCapability(
      {
        v: 1,
        operationKey: input.operationKey,
        keyMode: input.keyMode,
        argumentsHash: input.argumentsHash,
        tenant: input.tenant,
        principalId: input.principalId,
        scope: input.scope,
        action: input.request.action,
        resource: input.request.resource,
        policyVersion: decision.policyVersion,
        expiresAt: decision.expiresAt,
      },
      deps.capabilityKey,
    );
    return { ...decision, capability };
  }
  return { authorizeCall };
}
