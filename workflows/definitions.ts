/** Queries and updates of the agent-run workflow: imported by workflow code and by clients. */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { LedgerSnapshot } from './ledger';
import type { DependencyStats } from '../src/domain/reducer';

/** The ledger: events, projection and projection hash. With an argument n, the projection of the first n events. */
export const ledgerQuery = defineQuery<LedgerSnapshot, [number?]>('ledger');

export interface OperatorResolution {
  readonly logicalCallId: string;
  readonly outcome: 'SUCCEEDED' | 'FAILED';
  /**
   * The operator's identity token (compact JWS of a configured issuer): verified by the run, whose ledger records
   * the verified principal.
   */
  readonly token: string;
  /** Why: the evidence the operator used (a statement, a receipt found by hand). */
  readonly reason: string;
  readonly receipt?: string;
}

/** An operator settles a call that reconciliation left UNKNOWN. Refused for a call that is not UNKNOWN. */
export const resolveCallUpdate = defineUpdate<
  { readonly accepted: true; readonly operator: string },
  [OperatorResolution]
>('resolveCall');

/** A human's decision on one exact call: it must name the call's arguments hash and the policy version. */
export interface ApprovalDecisionInput {
  readonly logicalCallId: string;
  readonly argumentsHash: string;
  readonly policyVersion: string;
  /**
   * The approver's identity token (compact JWS of a configured issuer). The run verifies it; the ledger and the
   * decision chain record the verified principal.
   */
  readonly token: string;
  /** Only `approve` or `deny`; anything else is refused by the validator. */
  readonly decision: 'approve' | 'deny';
  readonly reason?: string;
  /** How long an approval stays valid: a positive safe integer up to the policy's maxApprovalTtlMs; default approvalTtlMs. */
  readonly ttlMs?: number;
}

export interface PendingApproval {
  readonly logicalCallId: string;
  readonly toolName: string;
  readonly summary: string;
  readonly argumentsHash: string;
  readonly policyVersion: string;
  readonly reason: string;
  readonly requestedAt: string;
}

/** Approve or deny a call waiting for approval. Refused unless it names the pending call's hash and policy. */
export const decideApprovalUpdate = defineUpdate<
  { readonly accepted: true; readonly expiresAt?: string; readonly approver: string },
  [ApprovalDecisionInput]
>('decideApproval');

/** A request to stop the run, carrying who asks (verified) and why. */
export interface CancelRequest {
  /** The requester's identity token: the run's own principal, or a role the policy lists in `cancellers`. */
  readonly token: string;
  readonly reason: string;
}

/**
 * Stop the run as Temporal's cancel does (calls in flight are reconciled; standing effects settled by `onAbort`),
 * with the verified requester recorded in `CancellationRequested`. Temporal's own cancel carries no identity. A run
 * already stopping (its saga or settlement running) finishes that uninterrupted, then stops `operator_stopped`.
 */
export const requestCancelUpdate = defineUpdate<{ readonly accepted: true }, [CancelRequest]>('requestCancel');

/** The calls waiting for a human decision, with what the decision must name. */
export const pendingApprovalsQuery = defineQuery<readonly PendingApproval[]>('pendingApprovals');

/** Retry accounting per dependency: logical calls, attempts, amplification, open circuit breakers. */
export interface RetryAccounting {
  readonly dependencies: Readonly<Record<string, DependencyStats>>;
  readonly amplification: Readonly<Record<string, number>>;
  readonly circuits: Readonly<Record<string, string>>;
}

export const retryAccountingQuery = defineQuery<RetryAccounting>('retryAccounting');
