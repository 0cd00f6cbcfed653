/**
 * Authorization types shared by the workflow (as data) and the authorizer activity. Workflow-safe: types only.
 */
import type { AuthorizationRequest } from '../domain/tool';
import type { CapabilityClaims } from './capability';
import type { Policy, RateLimit } from './policy-format';

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
      /** The matched rule's rate limits: the ones counted per principal or tenant are reserved across runs. */
      readonly rateLimits?: readonly RateLimit[];
    })
  | (DecisionBase & { readonly kind: 'denied'; readonly code: string })
  | (DecisionBase & {
      readonly kind: 'approval_required';
      readonly approvalTtlMs: number;
      readonly invalidated?: string;
    })
  | (DecisionBase & { readonly kind: 'rate_limited'; readonly retryAfterMs: number });

/** The policy a decision was made under, as the authorizer read it: the document and its canonical digest. */
export interface HeldPolicy {
  readonly document: Policy;
  readonly digest: string;
}

/**
 * A decision the workflow made from the policy it holds, to be signed at the instant of dispatch: the dispatch
 * activity signs `claims` only if the current policy still has `policyDigest`, and otherwise sends nothing.
 */
export interface DispatchAuthorization {
  readonly claims: CapabilityClaims;
  readonly policyDigest: string;
  /** The decision record (in the history with the dispatch input, before anything is sent). */
  readonly chain: readonly string[];
  readonly reason: string;
  readonly issuedAt: string;
}

/** The capability claims for exactly one allowed call. Pure: used by the authorizer and by the workflow. */
export function capabilityClaims(
  input: AuthorizationInput,
  decision: { readonly policyVersion: string; readonly expiresAt: string },
): CapabilityClaims {
  return {
    v: 1,
    operationKey: input.operationKey,
    keyMode: input.keyMode,
    argumentsHash: input.argumentsHash,
    tenant: input.tenant,
    principalId: input.principalId,
    scope: input.scope,
    action: input.request.action,
    resource: input.request.resource,
    policyVersion: decision.policyVersion,
    expiresAt: decision.expiresAt,
  };
}
