/**
 * `verifyIdentity`: checks an identity token against the worker's configured issuers (public keys only) and
 * returns who it names, with the token's SHA-256 digest. Refusals are non-retryable typed failures
 * (`Identity.Invalid`, `Identity.Unmapped`, `Identity.Unconfigured`): no retry can change them.
 *
 * Asked with `includePolicy` (a run opening), it also returns the policy the run will be held to, with its digest:
 * the run decides its first calls from it, as from the authorizer's answer, without a local activity (and so
 * without a marker) on its first turn. A policy that cannot be read is left out, never a refusal of the identity:
 * the run then asks the authorizer, which fails closed as before.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { identitySourceFromEnv, type IdentitySource } from '../src/identity/config';
import type { VerifiedIdentity } from '../src/identity/types';
import type { HeldPolicy } from '../src/policy/authorization';
import type { PolicyStore } from '../src/policy/policy-store';
import { IdentityError, verifyIdentityToken } from '../src/identity/verify';
import { heldPolicy as readHeld } from './authorize.activities';

export interface IdentityDeps {
  /** The issuers; default LEDGERLOOP_IDENTITY_ISSUERS (read at each verification; unset refuses every token). */
  readonly issuers?: IdentitySource;
  /** The policy store a run opening is given the policy from (the authorizer's own store). */
  readonly policies?: PolicyStore;
}

function heldPolicy(store: PolicyStore | undefined): { policy?: HeldPolicy } {
  if (!store) return {};
  try {
    return { policy: readHeld(store) };
  } catch {
    return {}; // unreadable: the first decision asks the authorizer, which refuses with its typed reason
  }
}

export function createIdentityActivities(deps: IdentityDeps | undefined) {
  const source = deps?.issuers ?? identitySourceFromEnv();
  async function verifyIdentity(input: {
    readonly token?: string;
    readonly includePolicy?: boolean;
    /** What the token is presented for (a run start, an approval, a resolution, a cancel), and on which run and call. */
    readonly purpose?: 'start' | 'approve' | 'resolve' | 'cancel';
    readonly runId?: string;
    readonly callId?: string;
  }): Promise<VerifiedIdentity & { readonly policy?: HeldPolicy }> {
    try {
      const identity = await verifyIdentityToken(source, input.token);
      return input.includePolicy ? { ...identity, ...heldPolicy(deps?.policies) } : identity;
    } catch (err) {
      if (err instanceof IdentityError)
        throw ApplicationFailure.create({ type: err.type, nonRetryable: true, message: err.message });
      throw err;
    }
  }
  return { verifyIdentity };
}
