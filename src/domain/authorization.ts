/**
 * Authorization types shared by the workflow (as data) and the authorizer activity. Workflow-safe: types only.
 */
import type { AnyTool, AuthorizationRequest, DispatchContext } from './tool';
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
 * A decision the workflow made from the policy it holds, as the dispatch activity needs it, and no more: the
 * activity derives the call's claims itself from the request (body, tool, intent), signs them only while the
 * current policy still has `policyDigest`, and otherwise sends nothing. The decision's full record (principal,
 * action, resource, amount, reason, chain) is the ledger's `AuthorizationAllowed`, not history's.
 */
export interface DispatchAuthorization {
  readonly policyDigest: string;
  /** When the decision lapses: the capability expires then, and a send within a second of it is refused. */
  readonly expiresAt: string;
  /** Who approved the call, when the policy required an approval (the workflow verified the approver). */
  readonly approvedBy?: string;
}

/** The authorization the dispatch activity is handed for an allowed decision. */
export function dispatchAuthorization(
  held: HeldPolicy,
  decision: { readonly expiresAt: string; readonly chain: readonly string[] },
): DispatchAuthorization {
  const approver = decision.chain.find((c) => c.startsWith('approved-by:'))?.slice('approved-by:'.length);
  return { policyDigest: held.digest, expiresAt: decision.expiresAt, ...(approver ? { approvedBy: approver } : {}) };
}

/**
 * The one builder of an `AuthorizationInput`: the workflow's decision (workflows/steps/decide.ts), the signer at
 * dispatch (activities/authorize.activities.ts) and the console's compensation all describe a call to the policy the
 * same way, from the tool's declaration and the call's arguments. `recentDispatches` is given the action, since the
 * run's own rate-limit windows are counted per action.
 */
export function authorizationInput(
  tool: AnyTool,
  args: unknown,
  ctx: DispatchContext,
  call: {
    readonly logicalCallId: string;
    readonly operationKey: string;
    readonly argumentsHash: string;
    readonly origin: 'model' | 'compensation';
  },
  facts: {
    readonly approval?: ApprovalGrant;
    readonly recentDispatches?: (action: string) => readonly number[];
    readonly keyMode: 'exact' | 'derived';
    readonly nowMs: number;
  },
): AuthorizationInput {
  const request = tool.authorization(args, ctx);
  return {
    principalId: ctx.principalId,
    tenant: ctx.tenant,
    logicalCallId: call.logicalCallId,
    operationKey: call.operationKey,
    argumentsHash: call.argumentsHash,
    toolName: tool.name,
    scope: tool.effectScope,
    request,
    origin: call.origin,
    toolApprovalReason: tool.approval?.(args, ctx) ?? null,
    ...(facts.approval ? { approval: facts.approval } : {}),
    recentDispatches: facts.recentDispatches?.(request.action) ?? [],
    keyMode: facts.keyMode,
    nowMs: facts.nowMs,
  };
}
