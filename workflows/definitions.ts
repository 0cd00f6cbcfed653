/** Queries and updates of the agent-run workflow: imported by workflow code and by clients. */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { LedgerSnapshot } from './ledger';
import type { DependencyStats } from '../src/domain/reducer';

/** The ledger: events, projection and projection hash. With an argument n, the projection of the first n events. */
export const ledgerQuery = defineQuery<LedgerSnapshot, [number?]>('ledger');

export interface OperatorResolution {
  readonly logicalCallId: string;
  readonly outcome: 'SUCCEEDED' | 'FAILED';
  /** Who decided, e.g. `ops:bob`; recorded in the ledger. */
  readonly operator: string;
  /** Why: the evidence the operator used (a statement, a receipt found by hand). */
  readonly reason: string;
  readonly receipt?: string;
}

/** An operator settles a call that reconciliation left UNKNOWN. Refused for a call that is not UNKNOWN. */
export const resolveCallUpdate = defineUpdate<{ readonly accepted: true }, [OperatorResolution]>('resolveCall');

/** A human's decision on one exact call: it must name the call's arguments hash and the policy version. */
export interface ApprovalDecisionInput {
  readonly logicalCallId: string;
  readonly argumentsHash: string;
  readonly policyVersion: string;
  /** Who decides, e.g. `manager:carol`; recorded in the ledger and the decision chain. */
  readonly approver: string;
  readonly decision: 'approve' | 'deny';
  readonly reason?: string;
  /** How long an approval stays valid; default the policy's approvalTtlMs. */
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
export const decideApprovalUpdate = defineUpdate<{ readonly accepted: true; readonly expiresAt?: string }, [ApprovalDecisionInput]>('decideApproval');

/** The calls waiting for a human decision, with what the decision must name. */
export const pendingApprovalsQuery = defineQuery<readonly PendingApproval[]>('pendingApprovals');

/** Retry accounting per dependency: logical calls, attempts, amplification, open circuit breakers. */
export const retryAccountingQuery = defineQuery<{
  readonly dependencies: Readonly<Record<string, DependencyStats>>;
  readonly amplification: Readonly<Record<string, number>>;
  readonly circuits: Readonly<Record<string, string>>;
}>('retryAccounting');
