/**
 * `verifyIdentity`: checks an identity token against the worker's configured issuers (public keys only) and
 * returns who it names, with the token's SHA-256 digest. Refusals are non-retryable typed failures
 * (`Identity.Invalid`, `Identity.Unmapped`, `Identity.Unconfigured`): no retry can change them.
 *
 * A token is verified for one act (src/identity/purpose.ts): the `purpose` asked (an opening, `includePolicy`
 * without a purpose, is a `start`), on the run asked (`runId`; by default the run whose workflow asks, read from
 * the activity's own context) and, to approve or resolve, the `callId` asked. A token for another act, run or call
 * is refused `Identity.Invalid`.
 *
 * Asked with `includePolicy` (a run opening), it also returns the policy the run will be held to, with its digest:
 * the run decides its first calls from it, as from the authorizer's answer, without a local activity (and so
 * without a marker) on its first turn. A policy that cannot be read is left out, never a refusal of the identity:
 * the run then asks the authorizer, which fails closed as before.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Failure } from '../src/domain/failures';
import type { TokenScope } from '../src/identity/purpose';
import { identitySourceFromEnv, type IdentitySource } from '../src/identity/config';
import type { VerifiedIdentity } from '../src/domain/verified-identity';
import type { HeldPolicy } from '../src/domain/authorization';
import type { PolicyStore } from '../src/stores/policy-store';
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

/** The workflow id of the run whose activity this is, or undefined outside an activity (a direct call in a test). */
function askingRun(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

/** The act a token must grant, from the request and the asking run; `IdentityError` when it names none. */
function scopeOf(input: {
  readonly includePolicy?: boolean;
  readonly purpose?: TokenScope['purpose'];
  readonly runId?: string;
  readonly callId?: string;
}): TokenScope {
  const purpose = input.purpose ?? (input.includePolicy === true ? 'start' : undefined);
  if (purpose === undefined)
    throw new IdentityError(Failure.IdentityInvalid, 'no act to verify the token for (purpose missing)');
  // The run the token must name: the one the request names (an approval on this run, or the console's operator acts
  // on another run's call), else the run that asks (an opening). A run that has not recorded its creation yet asks
  // with no run id ('', e.g. a cancel during its opening).
  const run = (input.runId === '' ? undefined : input.runId) ?? askingRun();
  if (run === undefined) throw new IdentityError(Failure.IdentityInvalid, 'no run to verify the token for');
  return { purpose, run, ...(input.callId !== undefined ? { call: input.callId } : {}) };
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
      const identity = await verifyIdentityToken(source, input.token, scopeOf(input));
      return input.includePolicy ? { ...identity, ...heldPolicy(deps?.policies) } : identity;
    } catch (err) {
      if (err instanceof IdentityError)
        throw ApplicationFailure.create({ type: err.type, nonRetryable: true, message: err.message });
      throw err;
    }
  }
  return { verifyIdentity };
}
