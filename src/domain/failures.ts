/**
 * One closed family of failure types with stable names. Activities throw them as ApplicationFailure `type`s;
 * the workflow classifies what comes back in one place (`classifyDispatchFailure`).
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure } from '@temporalio/common';

export const Failure = {
  ProposalMalformed: 'Proposal.Malformed',
  ProposalTooLarge: 'Proposal.TooLarge',
  /** Arguments nested deeper than `MAX_JSON_DEPTH` (src/domain/json-depth.ts): refused before anything parses them. */
  ProposalTooDeep: 'Proposal.TooDeep',
  ProposalSchemaViolation: 'Proposal.SchemaViolation',
  ProposalUnknownTool: 'Proposal.UnknownTool',
  ProposalCanonicalization: 'Proposal.Canonicalization',
  ProposalInvariant: 'Proposal.InvariantViolated',
  TenantMismatch: 'Tenant.Mismatch',
  AuthorizationDenied: 'Authorization.Denied',
  /** The capability expired before the dispatch could send: a new decision is needed. */
  AuthorizationExpired: 'Authorization.Expired',
  /** The policy changed between the workflow's decision and the dispatch: nothing was sent; decide again. */
  AuthorizationStale: 'Authorization.Stale',
  /** The downstream refused the capability (expired, other call, bad signature): no effect from this attempt. */
  CapabilityRejected: 'Capability.Rejected',
  /**
   * The signer refused: the call it re-derived from the request body and the tool (arguments, tenant, scope,
   * amount) differs from the decision it was handed, or the policy does not allow it. Nothing was sent by this
   * attempt; an earlier one may have, so reconciliation decides.
   */
  CapabilityClaimsMismatch: 'Capability.ClaimsMismatch',
  ApprovalDenied: 'Approval.Denied',
  ApprovalTimedOut: 'Approval.TimedOut',
  /** Another call of the run is UNKNOWN: no new dispatch until it is settled. */
  UnresolvedCall: 'Dispatch.UnresolvedCall',
  BudgetToolCalls: 'Budget.ToolCalls',
  /** More proposals in one turn than the run's per-turn cap: the extra ones are rejected, never dispatched. */
  BudgetProposalsPerTurn: 'Budget.ProposalsPerTurn',
  /** The dependency's circuit breaker is open after repeated failures. */
  CircuitOpen: 'Dispatch.CircuitOpen',
  IdempotencyArgumentsMismatch: 'Idempotency.ArgumentsMismatch',
  IdempotencyInProgress: 'Idempotency.InProgress',
  IdempotencyKeySealed: 'Idempotency.KeySealed',
  FenceStale: 'Fence.Stale',
  /** A tool whose contract is `none` is never sent twice: a retry after a possible send must settle by lookup. */
  DispatchNoResend: 'Dispatch.NoResend',
  /**
   * An attempt after a possible send found nothing under the key at a downstream that neither seals nor dedupes
   * it: a request still in flight could land, so nothing is resent. Reconcile (the recovery table's window rule).
   */
  AbsenceUnproven: 'Dispatch.AbsenceUnproven',
  /** A same-key resend would come after the downstream's key retention: it could charge again. Reconcile. */
  RetentionExpired: 'Idempotency.RetentionExpired',
  /**
   * The run asked for a strategy this worker does not serve (only the runtime's two are, unless the repository's lab
   * installed its own): nothing was sent. (A task queue must not mix lab and production workers: a lab worker's
   * earlier attempt would have sent.)
   */
  StrategyForbidden: 'Strategy.Forbidden',
  /**
   * The downstream refused the request because its intent time is older than its retention window: this request
   * did nothing, but an earlier attempt may have. Reconcile.
   */
  IntentExpired: 'Idempotency.IntentExpired',
  /** No usable intent time for the request (`X-Intent-At`): nothing was sent (or the downstream refused it). */
  IntentTimeMissing: 'Request.IntentTimeMissing',
  /** The downstream's idempotency contract (its retention) could not be read: a resend is not risked. Reconcile. */
  ContractUnreadable: 'Idempotency.ContractUnreadable',
  DispatchUnavailable: 'Dispatch.Unavailable',
  DispatchResponseLost: 'Dispatch.ResponseLost',
  DispatchRejected: 'Dispatch.Rejected',
  ResultInvalid: 'Result.Invalid',
  ReconcileUnreachable: 'Reconcile.Unreachable',
  /** The policy could not be read (the authorizer failed or is unreachable): nothing is sent (fail closed). */
  PolicyUnavailable: 'Policy.Unavailable',
  /** No cross-run quota decision could be made (no quota store, or the store did not answer): fail closed. */
  QuotaUnavailable: 'Quota.Unavailable',
  /** The quota activities refused a malformed reservation: no retry can change that. */
  QuotaInvalidRequest: 'Quota.InvalidRequest',
  PlannerScriptExhausted: 'Planner.ScriptExhausted',
  PlannerMalformed: 'Planner.Malformed',
  /** The run's planner settings are not what its model reads (e.g. a scripted run without a scenario): not retried. */
  PlannerConfigInvalid: 'Planner.ConfigInvalid',
  /** The model's reply was cut off at its output limit (`finish_reason: 'length'`) with no tool call: no answer. */
  PlannerTruncated: 'Planner.Truncated',
  /** The model refused (a `refusal`, or `finish_reason: 'content_filter'`) with no tool call: no answer. */
  PlannerRefused: 'Planner.Refused',
  PlannerUnavailable: 'Planner.Unavailable',
  /** The model provider failed transiently (429, 408, 409, 5xx, connection): Temporal retries, honouring retry-after. */
  PlannerProviderRetryable: 'Planner.ProviderRetryable',
  /** The model provider refused the request (400, 401, 403, 404, 422): no retry can change that. */
  PlannerProviderRejected: 'Planner.ProviderRejected',
  /** The planner's transcript store lacks an earlier turn of the run (or disagrees with what the workflow saw). */
  PlannerTranscriptMissing: 'Planner.TranscriptMissing',
  /** An operator resolution the downstream's evidence contradicts (or cannot confirm): nothing recorded. */
  OperatorResolutionRefused: 'Operator.ResolutionRefused',
  /** An operator resolution that is malformed or names no UNKNOWN call: nothing recorded. */
  OperatorResolutionInvalid: 'Operator.ResolutionInvalid',
  /** The lookup an operator resolution needs did not answer: nothing recorded, the call stays UNKNOWN. */
  OperatorLookupUnreachable: 'Operator.LookupUnreachable',
  /** An identity token that is missing, malformed, forged, expired, for another audience or issuer. */
  IdentityInvalid: 'Identity.Invalid',
  /** A verified token whose subject the issuer's mapping does not name. */
  IdentityUnmapped: 'Identity.Unmapped',
  /** The worker has no usable identity issuers: every token is refused (fail closed). */
  IdentityUnconfigured: 'Identity.Unconfigured',
  /** A verified token that names another principal or tenant than the run's input. */
  IdentityMismatch: 'Identity.Mismatch',
  /** A verified actor the policy does not allow here: a role not listed, another tenant, or its own call. */
  ActorForbidden: 'Actor.Forbidden',
  /** An approval decision that is malformed (decision value, TTL, token shape, note) or names no pending call. */
  ApprovalInvalid: 'Approval.Invalid',
  /** The run's input does not fit what the workflow reads (a raw client can send anything): nothing was run. */
  RunInputInvalid: 'Run.InputInvalid',
  /**
   * A governed session used in a way it cannot be (governedTools naming a tool the worker does not declare, a
   * session ended twice): the workflow fails with it, before any effect of the misuse.
   */
  SessionMisused: 'Session.Misused',
  /**
   * A signal, update or query whose payload this worker could not decode (plaintext to a strict codec, junk under
   * the encrypted encoding, an encoding no converter reads): refused or ignored, and the run goes on.
   */
  MessageUndecodable: 'Message.Undecodable',
  /** A query argument of the wrong shape (the `ledger` query's `upTo`): the query is refused, the run goes on. */
  MessageInvalid: 'Message.Invalid',
  /** Too little of the run is left for the next step (an attempt, a rate-limit wait): it is not begun. */
  DeadlineTooClose: 'Deadline.TooClose',
  /** The run was cancelled while the call was being decided or dispatched. */
  RunCancelled: 'Run.Cancelled',
  /** The call was interrupted by something other than the deadline or a cancellation. */
  RunInterrupted: 'Run.Interrupted',
  /** The downstream answered a lookup with seal `not_found` but did not seal the key: nothing is proven. */
  SealRefused: 'Reconcile.SealRefused',
} as const;
export type FailureType = (typeof Failure)[keyof typeof Failure];

/** Failures that prove no effect happened and that no retry can change: Temporal must not retry them. */
export const NON_RETRYABLE_DISPATCH: readonly FailureType[] = [
  Failure.RetentionExpired,
  Failure.AuthorizationExpired,
  Failure.CapabilityRejected,
  Failure.IdempotencyArgumentsMismatch,
  Failure.IdempotencyKeySealed,
  Failure.FenceStale,
  Failure.DispatchNoResend,
  Failure.AbsenceUnproven,
  Failure.DispatchRejected,
  Failure.StrategyForbidden,
];

export const NON_RETRYABLE_PLANNER: readonly FailureType[] = [
  Failure.PlannerScriptExhausted,
  Failure.PlannerMalformed,
  Failure.PlannerTruncated,
  Failure.PlannerRefused,
  Failure.PlannerProviderRejected,
  Failure.PlannerTranscriptMissing,
];

/** Everything the workflow may conclude about a dispatch activity that did not return a result. */
export type DispatchVerdict =
  /** The effect may or may not exist: reconcile, never mark failed. */
  | { readonly state: 'UNKNOWN'; readonly cause: string; readonly timeoutClass?: string }
  /** Proven: no effect happened. */
  | { readonly state: 'FAILED'; readonly code: string; readonly message: string }
  /** The capability ran out before sending: decide again (under the same key) and dispatch again. */
  | { readonly state: 'REAUTHORIZE'; readonly message: string };

/**
 * Rejections that prove the request had no effect and that no earlier attempt of it could have had one. A stale
 * fence is not among them: it says a request with a higher fence exists under the key, which may have committed.
 */
const PROVEN_NO_EFFECT: readonly string[] = [
  Failure.IdempotencyArgumentsMismatch,
  Failure.IdempotencyKeySealed,
  Failure.DispatchRejected,
  Failure.StrategyForbidden,
];

/** What a failed activity call failed with: the `ActivityFailure`'s cause, or the error itself. */
function causeOf(err: unknown): unknown {
  return err instanceof ActivityFailure && err.cause !== undefined ? err.cause : err;
}

function attemptIn(value: unknown): number | undefined {
  const a = typeof value === 'object' && value !== null ? (value as { attempt?: unknown }).attempt : undefined;
  return typeof a === 'number' && Number.isSafeInteger(a) && a >= 1 ? a : undefined;
}

/**
 * How many attempts a dispatch activity that ended without a result really made, from what happened, never from
 * the configured limit alone: the attempt number the activity reported in its failure, else Temporal's word that
 * the limit was reached, else the last attempt that heartbeated (a lower bound), else one.
 */
export function attemptsOf(
  err: unknown,
  maximumAttempts: number,
): { readonly attempts: number; readonly exact: boolean } {
  const cause = causeOf(err);
  const reported = cause instanceof ApplicationFailure ? attemptIn(cause.details?.[0]) : undefined;
  if (reported !== undefined) return { attempts: reported, exact: true };
  if (err instanceof ActivityFailure && err.retryState === RetryState.MAXIMUM_ATTEMPTS_REACHED)
    return { attempts: maximumAttempts, exact: true };
  const heartbeat = cause instanceof TimeoutFailure ? cause.lastHeartbeatDetails : undefined;
  const beat = attemptIn(Array.isArray(heartbeat) ? heartbeat[0] : heartbeat);
  return { attempts: beat ?? 1, exact: false };
}

/**
 * Decide UNKNOWN versus FAILED for a dispatch that ended without a result, by the SDK's failure classes. Only
 * failures that prove no effect (a contract rejection: other arguments under the key, a sealed key, a business
 * refusal) become FAILED; a timeout, a lost response, an unavailable downstream, a stale fence and anything
 * unrecognised stay UNKNOWN and go to reconciliation. "Do not guess."
 */
export function classifyDispatchFailure(err: unknown): DispatchVerdict {
  const cause = causeOf(err);
  if (cause instanceof TimeoutFailure) {
    const timeoutClass = String(cause.timeoutType ?? 'unknown');
    return { state: 'UNKNOWN', cause: `timeout:${timeoutClass}`, timeoutClass };
  }
  if (cause instanceof CancelledFailure) return { state: 'UNKNOWN', cause: 'cancelled_while_in_flight' };
  if (!(cause instanceof ApplicationFailure)) {
    const name = cause instanceof Error ? cause.name : 'error';
    return { state: 'UNKNOWN', cause: `unclassified:${name}` };
  }
  const type = cause.type ?? undefined;
  // "Unavailable" proves only that the last attempt committed nothing; an earlier attempt's response may have
  // been lost. Only reconciliation can tell, so it stays UNKNOWN.
  if (type === Failure.DispatchUnavailable) return { state: 'UNKNOWN', cause: 'unavailable_after_retries' };
  if (type === Failure.AuthorizationExpired || type === Failure.AuthorizationStale)
    return { state: 'REAUTHORIZE', message: cause.message };
  // The downstream refused this attempt's capability: this attempt did nothing, an earlier one may have.
  if (type === Failure.CapabilityRejected) return { state: 'UNKNOWN', cause: 'capability_rejected' };
  // The signer refused to sign what it was handed: nothing sent by this attempt; an earlier one may have.
  if (type === Failure.CapabilityClaimsMismatch) return { state: 'UNKNOWN', cause: 'capability_claims_mismatch' };
  if (type === Failure.RetentionExpired) return { state: 'UNKNOWN', cause: 'retention_expired' };
  // A higher fence under the key: another owner's request may have committed. Only a lookup can tell.
  if (type === Failure.FenceStale) return { state: 'UNKNOWN', cause: 'fence_stale' };
  // The tool's contract forbids a resend after a possible send: settle by lookup.
  if (type === Failure.DispatchNoResend) return { state: 'UNKNOWN', cause: 'no_resend' };
  // Nothing found at a downstream that can neither seal nor dedupe: not proof. Reconciliation waits out the window.
  if (type === Failure.AbsenceUnproven) return { state: 'UNKNOWN', cause: 'absence_unproven' };
  // Refused (or not sent) for its intent time or an unreadable contract: this attempt did nothing, an earlier
  // one may have. Reconciliation (lookup and seal) decides.
  if (type === Failure.IntentExpired) return { state: 'UNKNOWN', cause: 'intent_expired' };
  if (type === Failure.IntentTimeMissing) return { state: 'UNKNOWN', cause: 'intent_time_missing' };
  if (type === Failure.ContractUnreadable) return { state: 'UNKNOWN', cause: 'contract_unreadable' };
  if (type !== undefined && PROVEN_NO_EFFECT.includes(type)) {
    return { state: 'FAILED', code: type, message: cause.message };
  }
  if (type === Failure.DispatchResponseLost) return { state: 'UNKNOWN', cause: 'response_lost' };
  return { state: 'UNKNOWN', cause: `unclassified:${type ?? cause.name}` };
}

/** The message of what a failed activity call failed with (never the downstream's text: activities write it). */
export function failureMessage(err: unknown): string | undefined {
  const cause = causeOf(err);
  return cause instanceof Error && cause.message !== '' ? cause.message : undefined;
}

/** UNKNOWN causes that prove the failing attempt committed nothing (an earlier attempt may have). */
const ATTEMPT_DID_NOTHING: ReadonlySet<string> = new Set(['capability_rejected', 'capability_claims_mismatch']);

/** A dispatch activity that ended without a result, judged with the attempt evidence it carries. */
export interface FailedDispatch {
  readonly verdict: DispatchVerdict;
  /** Attempts the activity really made (see `attemptsOf`). */
  readonly attempts: number;
  /** Whether `attempts` is exact (reported by the activity, or Temporal's limit reached), not a lower bound. */
  readonly attemptsExact: boolean;
  /**
   * Present when the activity reported, by its own attempt number, that its only attempt was refused before
   * anything could commit (the downstream refused its capability, or the signer refused to sign). Whether that
   * settles the call FAILED is the call runner's to say: an earlier dispatch of the same call may have sent.
   */
  readonly onlyAttemptSentNothing?: { readonly code: string; readonly message: string };
}

/** Classify a failed dispatch and read its attempt evidence, in one place. */
export function judgeDispatchFailure(err: unknown, maximumAttempts: number): FailedDispatch {
  const verdict = classifyDispatchFailure(err);
  const reported = attemptsOf(err, maximumAttempts);
  if (
    verdict.state === 'UNKNOWN' &&
    ATTEMPT_DID_NOTHING.has(verdict.cause) &&
    reported.exact &&
    reported.attempts === 1
  ) {
    return {
      verdict,
      attempts: reported.attempts,
      attemptsExact: true,
      onlyAttemptSentNothing: {
        code:
          (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type) ||
          verdict.cause,
        message: err instanceof ActivityFailure && err.cause ? err.cause.message : verdict.cause,
      },
    };
  }
  return { verdict, attempts: reported.attempts, attemptsExact: reported.exact };
}

/** A downstream's failure code as the model and the ledger may see it: a dotted code of bounded length, or a generic one. */
const SAFE_CODE = /^[A-Z][A-Za-z0-9]{0,31}(\.[A-Z][A-Za-z0-9]{0,31}){1,3}$/;

/**
 * Downstream failure text is untrusted output: it never reaches the model or the ledger verbatim. Only a code of
 * the expected shape passes (anything else becomes `Dispatch.Rejected`), and the message is written here, from
 * the code and the service name, never taken from the response.
 */
export function vetDownstreamFailure(
  code: unknown,
  service: string,
): { readonly code: string; readonly message: string } {
  const safe = typeof code === 'string' && code.length <= 96 && SAFE_CODE.test(code) ? code : Failure.DispatchRejected;
  return { code: safe, message: `${service} refused the request (${safe})` };
}
