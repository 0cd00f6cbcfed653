/**
 * Named activity-option presets. Temporal is the one retry owner for every dependency: each preset has a finite
 * `maximumAttempts` (Temporal's default is unlimited) and clients inside activities run with their own retries
 * off. Every attempt's timeout derives from the run's one absolute deadline:
 *
 *   attempt_timeout = min(per_attempt_cap, deadline - now - recovery_reserve)
 *
 * and `scheduleToCloseTimeout` caps all attempts together at the same point, so retries can never carry work
 * past the deadline. Workflow-safe: pure arithmetic on the workflow-task time.
 */
import { ActivityCancellationType, type ActivityOptions } from '@temporalio/common';
import { NON_RETRYABLE_DISPATCH, NON_RETRYABLE_PLANNER, Failure } from './failures';
import type { AttemptLimits, TimeoutCaps } from './run';

/** Below this an attempt cannot do useful work: the run stops with `deadline_exceeded` instead. */
export const MIN_ATTEMPT_MS = 500;

export interface DeadlineClock {
  readonly deadlineAtMs: number;
  readonly nowMs: number;
  readonly caps: TimeoutCaps;
  readonly limits: AttemptLimits;
}

export class DeadlineTooClose extends Error {
  override readonly name = Failure.DeadlineTooClose;
}

/** Time left for work, after keeping the recovery reserve back. */
export function remainingForWork(c: DeadlineClock, reserveMs: number = c.caps.recoveryReserveMs): number {
  return c.deadlineAtMs - c.nowMs - reserveMs;
}

/** min(cap, deadline - now - reserve); throws DeadlineTooClose when less than MIN_ATTEMPT_MS is left. */
export function attemptTimeoutMs(
  c: DeadlineClock,
  capMs: number,
  reserveMs: number = c.caps.recoveryReserveMs,
): number {
  const left = remainingForWork(c, reserveMs);
  if (left < MIN_ATTEMPT_MS) throw new DeadlineTooClose(`only ${left} ms left before the run deadline`);
  return Math.min(capMs, left);
}

function bounded(
  c: DeadlineClock,
  capMs: number,
  maximumAttempts: number,
  nonRetryable: readonly string[],
  summary: string,
  reserveMs?: number,
): ActivityOptions {
  const startToClose = attemptTimeoutMs(c, capMs, reserveMs);
  const total = Math.max(startToClose, remainingForWork(c, reserveMs));
  return {
    startToCloseTimeout: startToClose,
    scheduleToCloseTimeout: total,
    summary,
    retry: {
      maximumAttempts,
      initialInterval: 200,
      backoffCoefficient: 2,
      maximumInterval: 2_000,
      nonRetryableErrorTypes: [...nonRetryable],
    },
  };
}

/** The model call: the planner is stateless per request, so retries are safe; bounded by `limits.model`. */
export function modelCallPreset(c: DeadlineClock, summary: string): ActivityOptions {
  return bounded(c, c.caps.modelAttemptMs, c.limits.model, NON_RETRYABLE_PLANNER, summary);
}

/**
 * One tool dispatch: every retry reuses the call's operation key under the runtime's strategies.
 * On cancellation the workflow stops waiting at once (TRY_CANCEL) and reconciles: cancelling a local wait
 * proves nothing about the remote effect.
 */
export function toolDispatchPreset(c: DeadlineClock, summary: string): ActivityOptions {
  return {
    ...bounded(c, c.caps.toolAttemptMs, c.limits.tool, NON_RETRYABLE_DISPATCH, summary),
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  };
}

/**
 * A compensation: a governed effect of its own, bounded by `limits.compensation`; it may use the recovery
 * reserve, since offsetting an effect is what the reserve is kept for.
 */
export function compensationPreset(c: DeadlineClock, summary: string): ActivityOptions {
  return bounded(c, c.caps.toolAttemptMs, c.limits.compensation, NON_RETRYABLE_DISPATCH, summary, 0);
}

/**
 * Asking the authorizer (a run whose held policy went stale, or whose opening could not read one): pure and
 * read-only, 5 s an attempt, 3 attempts; an invalid policy is not retried.
 */
export function authorizerPreset(c: DeadlineClock, summary: string): ActivityOptions {
  return bounded(c, 5_000, 3, ['Policy.Invalid', 'PolicyFileError'], summary);
}

/** Reconciliation by key: read-only (plus sealing a missing key), so it may use the recovery reserve itself. */
export function reconcilePreset(c: DeadlineClock, summary: string): ActivityOptions {
  return bounded(c, c.caps.reconcileAttemptMs, c.limits.reconcile, [Failure.ResultInvalid], summary, 0);
}
