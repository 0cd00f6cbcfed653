/**
 * Verified identities inside the run. The workflow never verifies a signature itself (WebCrypto is not available
 * in the sandbox, and the issuer keys are the worker's configuration): the `verifyIdentity` activity does, and
 * the workflow decides from what it returns: the run's principal must be the token's, an approver must hold a
 * role the held policy allows and not be the run's principal, and so on.
 */
import { ActivityFailure, ApplicationFailure, TemporalFailure } from '@temporalio/workflow';
import { activities } from './proxies';
import { Failure } from '../src/domain/failures';
import type { Principal } from '../src/domain/run';
import type { VerifiedIdentity } from '../src/identity/types';
import type { HeldPolicy } from '../src/policy/authorization';

/** Patch id: a new run verifies its identity token before its first model call. */
export const VERIFIED_IDENTITY = 'verified-identity';

/**
 * The verification an actor or a run start waits on: 10 s per attempt, 3 attempts 0.5 s apart. Refusals are
 * non-retryable; only a worker that does not answer is retried.
 */
const VERIFY = {
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3, initialInterval: '500ms', backoffCoefficient: 1 },
} as const;

export type RunIdentity =
  | {
      readonly ok: true;
      readonly identity: VerifiedIdentity;
      /** The policy the run is held to, when the opening asked for it and the worker could read it. */
      readonly policy?: HeldPolicy;
    }
  | { readonly ok: false; readonly code: string; readonly reason: string };

function refusalOf(err: unknown): { code: string; reason: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && typeof cause.type === 'string' && cause.type.startsWith('Identity.')) {
    return { code: cause.type, reason: cause.message };
  }
  const why = cause instanceof Error ? cause.message : String(cause);
  return { code: Failure.IdentityInvalid, reason: `the identity could not be verified (${why.slice(0, 200)})` };
}

/**
 * Verify the run's token and that it names the input's principal and tenant. Never throws for a bad token. With
 * `includePolicy` the same activity returns the policy the run is held to: whether a run took it is decided by
 * what its history recorded (runs recorded before it have no policy there), so no patch marker is needed.
 */
export async function verifyRunIdentity(
  token: string | undefined,
  principal: Principal,
  opts: { readonly includePolicy?: boolean } = {},
): Promise<RunIdentity> {
  if (token === undefined)
    return { ok: false, code: Failure.IdentityInvalid, reason: 'the run carries no identity token' };
  let verified: VerifiedIdentity & { readonly policy?: HeldPolicy };
  try {
    verified = await activities.verifyIdentity.executeWithOptions({ ...VERIFY, summary: 'verify run identity' }, [
      opts.includePolicy ? { token, includePolicy: true } : { token },
    ]);
  } catch (err) {
    if (err instanceof TemporalFailure && !(err instanceof ActivityFailure)) throw err; // cancellation
    return { ok: false, ...refusalOf(err) };
  }
  const { policy, ...identity } = verified;
  if (identity.principalId !== principal.id || identity.tenant !== principal.tenant) {
    return {
      ok: false,
      code: Failure.IdentityMismatch,
      reason: `the token names ${identity.principalId} (${identity.tenant}), the input ${principal.id} (${principal.tenant})`,
    };
  }
  return policy ? { ok: true, identity, policy } : { ok: true, identity };
}

/**
 * Verify an actor's token from an update handler. A refusal becomes an `ApplicationFailure` of the same type,
 * which fails the update only (never the workflow task).
 */
export async function verifyActor(token: string, purpose: string): Promise<VerifiedIdentity> {
  try {
    return await activities.verifyIdentity.executeWithOptions({ ...VERIFY, summary: `verify ${purpose}` }, [{ token }]);
  } catch (err) {
    const r = refusalOf(err);
    throw ApplicationFailure.create({
      type: r.code,
      nonRetryable: true,
      message: `${purpose}: ${r.reason}; nothing recorded`,
    });
  }
}

export function forbidden(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: Failure.ActorForbidden,
    nonRetryable: true,
    message: `${message}; nothing recorded`,
  });
}
