/**
 * The agent run's side of cross-run rate limits: ask the workers' quota store (through the `reserveQuota`
 * activity, src/stores/quota-store.ts) for a slot before a rate-limited call is dispatched, and give it back when
 * the call is rejected before sending. Limits with `per: 'run'` never leave the run (the authorizer counts them from the run's own
 * dispatch times); `principal` and `tenant` limits are counted here, across every run of the tenant.
 */
import type { ActivityOptions } from '@temporalio/workflow';
import { activities } from './proxies';
import { attemptTimeoutMs, type DeadlineClock } from '../src/domain/activity-presets';
import { Failure } from '../src/domain/failures';
import type { RateLimit } from '../src/domain/policy-format';
import { quotaScopesFor, reservationIdFor } from '../src/policy/quota-window';

export interface AcrossRunsRequest {
  readonly tenant: string;
  readonly principalId: string;
  /** The run's id (the agent run's workflow id) and the call's logical id: together, the reservation id. */
  readonly runId: string;
  readonly logicalCallId: string;
  readonly action: string;
  /** The matched rule's limits (`rateLimitsOf(rule)`). */
  readonly limits: readonly RateLimit[];
  /** The run's clock: each attempt's timeout stays inside the deadline. Absent: fixed 5 s attempts. */
  readonly clock?: DeadlineClock;
}

export type AcrossRunsDecision =
  { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number; readonly scope: string };

/** No cross-run decision could be made (no store, or it did not answer): the caller must not dispatch (fail closed). */
export class QuotaUnavailable extends Error {
  override readonly name = Failure.QuotaUnavailable;
}

/** Per attempt at most 5 s; 3 attempts; a malformed request or a worker without a quota store is not retried. */
export const QUOTA_ATTEMPT_MS = 5_000;
const QUOTA_ATTEMPTS = 3;

function quotaOptions(clock: DeadlineClock | undefined, summary: string): ActivityOptions {
  const startToClose = clock ? attemptTimeoutMs(clock, QUOTA_ATTEMPT_MS) : QUOTA_ATTEMPT_MS;
  return {
    startToCloseTimeout: startToClose,
    scheduleToCloseTimeout: startToClose * QUOTA_ATTEMPTS + 3_000,
    summary,
    retry: {
      maximumAttempts: QUOTA_ATTEMPTS,
      initialInterval: 200,
      backoffCoefficient: 2,
      maximumInterval: 1_000,
      nonRetryableErrorTypes: [Failure.QuotaInvalidRequest],
    },
  };
}

/**
 * Reserve one slot for this call in every cross-run window its rule names (principal and/or tenant), all or
 * none. `{ ok: true }`: dispatch may go ahead (asking again for the same call answers ok and counts nothing).
 * `{ ok: false, retryAfterMs, scope }`: a window is full; nothing was held; ask again after `retryAfterMs`.
 * With no principal or tenant limit it answers `{ ok: true }` without scheduling anything. Throws
 * `QuotaUnavailable` when the quota cannot be asked (fail closed), and `DeadlineTooClose` (from the clock) when
 * too little of the run is left for an attempt.
 */
export async function reserveAcrossRuns(req: AcrossRunsRequest): Promise<AcrossRunsDecision> {
  const scopes = quotaScopesFor(req.limits, req, req.action);
  if (scopes.length === 0) return { ok: true };
  const reservationId = reservationIdFor(req.runId, req.logicalCallId);
  const options = quotaOptions(req.clock, `quota ${req.action} · ${req.logicalCallId}`);
  let decision;
  try {
    decision = await activities.reserveQuota.executeWithOptions(options, [
      { tenant: req.tenant, reservationId, scopes },
    ]);
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause;
    throw new QuotaUnavailable(
      `no cross-run rate-limit decision for ${req.logicalCallId}: ${cause?.message ?? (err as Error).message}`,
    );
  }
  return decision.ok ? { ok: true } : { ok: false, retryAfterMs: decision.retryAfterMs, scope: decision.scope };
}

/**
 * Give back this call's reservation after it was rejected before sending (never after a send: an effect that may
 * exist keeps its slot). Best effort: a release that fails leaves the slot taken until its window ends, which errs
 * on the strict side. Returns whether a reservation was released.
 */
export async function releaseAcrossRuns(
  req: Pick<AcrossRunsRequest, 'tenant' | 'runId' | 'logicalCallId' | 'clock'>,
): Promise<boolean> {
  try {
    const options = quotaOptions(req.clock, `quota release · ${req.logicalCallId}`);
    const reservationId = reservationIdFor(req.runId, req.logicalCallId);
    return (await activities.releaseQuota.executeWithOptions(options, [{ tenant: req.tenant, reservationId }]))
      .released;
  } catch {
    return false;
  }
}
