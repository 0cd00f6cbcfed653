/**
 * Verified identities inside the run. The workflow never verifies a signature itself (WebCrypto is not available
 * in the sandbox, and the issuer keys are the worker's configuration): the `verifyIdentity` activity does, and
 * the workflow decides from what it returns: the run's principal must be the token's, an approver must hold a
 * role the held policy allows and not be the run's principal, and so on.
 */
import { ActivityFailure, ApplicationFailure, TemporalFailure } from '@temporalio/workflow';
import { activities } from './proxies';
import type { OpenedIdentity } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import type { Principal } from '../src/domain/run';
import { principalMismatch, type VerifiedIdentity } from '../src/domain/verified-identity';
import type { HeldPolicy } from '../src/domain/authorization';

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

/** The typed identity refusal an activity failed with (`Identity.*`), if that is why it failed. */
export function identityRefusal(err: unknown): { code: string; reason: string } | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && typeof cause.type === 'string' && cause.type.startsWith('Identity.')
    ? { code: cause.type, reason: cause.message }
    : undefined;
}

function refusalOf(err: unknown): { code: string; reason: string } {
  const refused = identityRefusal(err);
  if (refused) return refused;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const why = cause instanceof Error ? cause.message : String(cause);
  return { code: Failure.IdentityInvalid, reason: `the identity could not be verified (${why.slice(0, 200)})` };
}

/** What an opening verified, checked again here: the identity must name the run's principal and tenant. */
export function checkedOpening(opened: OpenedIdentity, principal: Principal): RunIdentity {
  const mismatch = principalMismatch(opened.identity, principal);
  if (mismatch !== undefined) return { ok: false, code: Failure.IdentityMismatch, reason: mismatch };
  return opened.policy
    ? { ok: true, identity: opened.identity, policy: opened.policy }
    : { ok: true, identity: opened.identity };
}

/**
 * Verify the run's token and that it names the input's principal and tenant, and read the policy the run is held
 * to. Never throws for a bad token.
 */
export async function verifyRunIdentity(token: string | undefined, principal: Principal): Promise<RunIdentity> {
  if (token === undefined)
    return { ok: false, code: Failure.IdentityInvalid, reason: 'the run carries no identity token' };
  let verified: VerifiedIdentity & { readonly policy?: HeldPolicy };
  try {
    verified = await activities.verifyIdentity.executeWithOptions({ ...VERIFY, summary: 'verify run identity' }, [
      { token, includePolicy: true, purpose: 'start' },
    ]);
  } catch (err) {
    if (err instanceof TemporalFailure && !(err instanceof ActivityFailure)) throw err; // cancellation
    return { ok: false, ...refusalOf(err) };
  }
  const { policy, ...identity } = verified;
  return checkedOpening(policy ? { identity, policy } : { identity }, principal);
}

/** What an actor's token is presented for: the act, and the run (and call) it acts on. */
export interface ActorPurpose {
  readonly purpose: 'approve' | 'resolve' | 'cancel';
  readonly runId: string;
  readonly callId?: string;
}

/**
 * Verify an actor's token from an update handler, for one purpose on this run (and call). A refusal becomes an
 * `ApplicationFailure` of the same type, which fails the update only (never the workflow task).
 */
export async function verifyActor(token: string, who: string, purpose: ActorPurpose): Promise<VerifiedIdentity> {
  try {
    return await activities.verifyIdentity.executeWithOptions({ ...VERIFY, summary: `verify ${who}` }, [
      { token, ...purpose },
    ]);
  } catch (err) {
    const r = refusalOf(err);
    throw ApplicationFailure.create({
      type: r.code,
      nonRetryable: true,
      message: `${who}: ${r.reason}; nothing recorded`,
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
