/**
 * One closed family of failure types with stable names. Activities throw them as ApplicationFailure `type`s;
 * the workflow classifies what comes back in one place (`classifyDispatchFailure`).
 */
export const Failure = {
  ProposalMalformed: 'Proposal.Malformed',
  ProposalTooLarge: 'Proposal.TooLarge',
  ProposalSchemaViolation: 'Proposal.SchemaViolation',
  ProposalUnknownTool: 'Proposal.UnknownTool',
  ProposalCanonicalization: 'Proposal.Canonicalization',
  AuthorizationDenied: 'Authorization.Denied',
  IdempotencyArgumentsMismatch: 'Idempotency.ArgumentsMismatch',
  IdempotencyInProgress: 'Idempotency.InProgress',
  IdempotencyKeySealed: 'Idempotency.KeySealed',
  FenceStale: 'Fence.Stale',
  DispatchUnavailable: 'Dispatch.Unavailable',
  DispatchResponseLost: 'Dispatch.ResponseLost',
  DispatchRejected: 'Dispatch.Rejected',
  ResultInvalid: 'Result.Invalid',
  ReconcileUnreachable: 'Reconcile.Unreachable',
  PlannerScriptExhausted: 'Planner.ScriptExhausted',
  PlannerMalformed: 'Planner.Malformed',
  PlannerUnavailable: 'Planner.Unavailable',
} as const;
export type FailureType = (typeof Failure)[keyof typeof Failure];

/** Failures that prove no effect happened and that no retry can change: Temporal must not retry them. */
export const NON_RETRYABLE_DISPATCH: readonly FailureType[] = [
  Failure.IdempotencyArgumentsMismatch,
  Failure.IdempotencyKeySealed,
  Failure.FenceStale,
  Failure.DispatchRejected,
];

export const NON_RETRYABLE_PLANNER: readonly FailureType[] = [
  Failure.PlannerScriptExhausted,
  Failure.PlannerMalformed,
];

/** Everything the workflow may conclude about a dispatch activity that did not return a result. */
export type DispatchVerdict =
  /** The effect may or may not exist: reconcile, never mark failed. */
  | { readonly state: 'UNKNOWN'; readonly cause: string }
  /** Proven: no effect happened. */
  | { readonly state: 'FAILED'; readonly code: string; readonly message: string };

/** Shape of the failures the workflow sees, kept structural so this module stays free of SDK imports. */
export interface FailureLike {
  readonly name?: string;
  readonly message?: string;
  readonly type?: string | null;
  readonly timeoutType?: unknown;
  readonly cause?: FailureLike | undefined;
}

/**
 * Decide UNKNOWN versus FAILED for a dispatch that ended without a result. Only failures that prove no effect
 * (a contract rejection: other arguments under the key, a sealed key, a stale fence, a business refusal)
 * become FAILED; a timeout, a lost response, an unavailable downstream and anything unrecognised stay UNKNOWN
 * and go to reconciliation. "Do not guess."
 */
export function classifyDispatchFailure(err: FailureLike): DispatchVerdict {
  const cause = err.cause ?? err;
  if (cause.name === 'TimeoutFailure' || cause.timeoutType !== undefined) {
    return { state: 'UNKNOWN', cause: `timeout:${String(cause.timeoutType ?? 'unknown')}` };
  }
  if (cause.name === 'CancelledFailure') return { state: 'UNKNOWN', cause: 'cancelled_while_in_flight' };
  const type = cause.type ?? undefined;
  // "Unavailable" proves only that the last attempt committed nothing; an earlier attempt's response may have
  // been lost. Only reconciliation can tell, so it stays UNKNOWN.
  if (type === Failure.DispatchUnavailable) return { state: 'UNKNOWN', cause: 'unavailable_after_retries' };
  if (type !== undefined && (NON_RETRYABLE_DISPATCH as readonly string[]).includes(type)) {
    return { state: 'FAILED', code: type, message: cause.message ?? type };
  }
  if (type === Failure.DispatchResponseLost) return { state: 'UNKNOWN', cause: 'response_lost' };
  return { state: 'UNKNOWN', cause: `unclassified:${type ?? cause.name ?? 'error'}` };
}
