/**
 * Authorization types shared by the workflow (as data) and the authorizer activity. Workflow-safe: types only.
 */
import type { AuthorizationRequest } from '../domain/tool';

/** A human approval of one exact call: bound to its logical call id, arguments hash and policy version. */
export interface ApprovalGrant {
  readonly logicalCallId: string;
  readonly argumentsHash: string;
  readonly policyVersion: string;
  readonly approver: string;
  readonly grantedAt: string;
  readonly expiresAt: string;
  readonly note?: string;
}

export interface AuthorizationInput {
  readonly principalId: string;
  readonly tenant: string;
  readonly logicalCallId: string;
  readonly operationKey: string;
  readonly argumentsHash: string;
  readonly toolName: string;
  readonly scope: string;
  readonly request: AuthorizationRequest;
  readonly origin: 'model' | 'compensation';
  /** The tool's own reason to require a human (irreversible tools), or null. */
  readonly toolApprovalReason: string | null;
  readonly approval?: ApprovalGrant;
  /** Workflow times (ms) of earlier dispatches of this action in this run, for rate limits. */
  readonly recentDispatches: readonly number[];
  readonly keyMode: 'exact' | 'derived';
  /** The workflow's clock: decisions are made at workflow time, so replay and time-skipping agree. */
  readonly nowMs: number;
}

interface DecisionBase {
  readonly policyVersion: string;
  readonly reason: string;
  readonly issuedAt: string;
}

export type AuthorizationDecision =
  | (DecisionBase & {
      readonly kind: 'allowed';
      readonly expiresAt: string;
      /** Who vouched for this call: the principal, then approvers. */
      readonly chain: readonly string[];
      /** The signed capability for exactly this call; absent when no signing key is configured. */
      readonly capability?: string;
    })
  | (DecisionBase & { readonly kind: 'denied'; readonly code: string })
  | (DecisionBase & { readonly kind: 'approval_required'; readonly approvalTtlMs: number; readonly invalidated?: string })
  | (DecisionBase & { readonly kind: 'rate_limited'; readonly retryAfterMs: number });
