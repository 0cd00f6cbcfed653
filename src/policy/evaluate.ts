/**
 * The policy evaluator: pure, given the current policy, the call and the workflow clock. Order: tenant binding,
 * rule lookup (action, origin, principal), amount and currency, approval, rate limit.
 */
import type { ApprovalGrant, AuthorizationDecision, AuthorizationInput } from '../domain/authorization';
import type { Policy, PolicyRule, RateLimit } from '../domain/policy-format';
import { rateLimitsOf } from './policy-rules';
import { lapsesBeforeSend } from './send-margin';

function principalMatches(rule: PolicyRule, principalId: string): boolean {
  if (!rule.principals) return true;
  return rule.principals.some((p) => (p.endsWith('*') ? principalId.startsWith(p.slice(0, -1)) : p === principalId));
}

function approvalProblem(grant: ApprovalGrant | undefined, input: AuthorizationInput, policy: Policy): string | null {
  if (!grant) return null;
  if (grant.logicalCallId !== input.logicalCallId || grant.argumentsHash !== input.argumentsHash)
    return 'the approval is for another call';
  if (grant.policyVersion !== policy.version)
    return `the approval was given under ${grant.policyVersion}, the policy is now ${policy.version}`;
  if (Date.parse(grant.expiresAt) <= input.nowMs) return `the approval expired at ${grant.expiresAt}`;
  // An approval about to lapse cannot carry a send: ask again rather than decide on it.
  if (lapsesBeforeSend(grant.expiresAt, input.nowMs))
    return `the approval lapses at ${grant.expiresAt}, too soon to send on`;
  return null;
}

/** Why the matched rule refuses the request's currency or amount, or null when both are within it. */
function limitDenial(rule: PolicyRule, req: AuthorizationInput['request'], policy: Policy): string | null {
  if (rule.currency !== undefined && req.currency !== undefined && req.currency !== rule.currency)
    return `${req.action} is allowed in ${rule.currency} only`;
  if (rule.maxAmountMinor !== undefined && (req.amountMinor ?? 0) > rule.maxAmountMinor)
    return `amount ${req.amountMinor} exceeds the limit ${rule.maxAmountMinor} of ${policy.version}`;
  return null;
}

/** Why the call needs a human's approval (the rule's, else the tool's own reason), or null when it needs none. */
function approvalReasonOf(rule: PolicyRule, input: AuthorizationInput, policy: Policy): string | null {
  const req = input.request;
  if (rule.approval === 'never') return null;
  if (rule.approval === 'always') return `${policy.version} requires approval for ${req.action}`;
  if (rule.approvalOverMinor !== undefined && (req.amountMinor ?? 0) > rule.approvalOverMinor)
    return `amount ${req.amountMinor} is over the approval threshold ${rule.approvalOverMinor}`;
  return input.toolApprovalReason;
}

/**
 * The first of the rule's limits the run's own dispatches already fill, with how long until a slot frees. Every
 * limit holds within one run too (a principal's or tenant's window contains the run's); the cross-run count is
 * the tenant quota workflow's (workflows/quota-client.ts).
 */
function filledLimit(
  limits: readonly RateLimit[],
  input: AuthorizationInput,
): { limit: RateLimit; retryAfterMs: number } | undefined {
  const now = input.nowMs;
  for (const limit of limits) {
    const windowStart = now - limit.perMs;
    const inWindow = input.recentDispatches.filter((t) => t > windowStart).sort((a, b) => a - b);
    if (inWindow.length >= limit.max) {
      return { limit, retryAfterMs: Math.max(1, inWindow[inWindow.length - limit.max]! + limit.perMs - now) };
    }
  }
  return undefined;
}

/** The evaluator's verdict: a denial, an approval or rate-limit stop, or an allowance with its chain and limits. */
export type Evaluation =
  | Exclude<AuthorizationDecision, { kind: 'allowed' }>
  | {
      kind: 'allowed';
      reason: string;
      chain: string[];
      policyVersion: string;
      issuedAt: string;
      expiresAt: string;
      rateLimits?: readonly RateLimit[];
    };

export function evaluate(policy: Policy, input: AuthorizationInput): Evaluation {
  const now = input.nowMs;
  const base = { policyVersion: policy.version, issuedAt: new Date(now).toISOString() };
  const req = input.request;
  if (req.resourceTenant !== input.tenant) {
    const reason = `${input.principalId} of ${input.tenant} may not act on a resource of ${req.resourceTenant}`;
    return { ...base, kind: 'denied', code: 'Tenant.Mismatch', reason };
  }
  const rule = policy.rules.find(
    (r) =>
      r.action === req.action &&
      (r.origin === 'any' || r.origin === input.origin) &&
      principalMatches(r, input.principalId),
  );
  const denied = (reason: string) => ({
    ...base,
    kind: 'denied' as const,
    code: 'Authorization.Denied' as const,
    reason,
  });
  if (!rule)
    return denied(`no rule of ${policy.version} lets ${input.principalId} do ${req.action} as ${input.origin}`);
  const overLimit = limitDenial(rule, req, policy);
  if (overLimit !== null) return denied(overLimit);
  const approvalReason = approvalReasonOf(rule, input, policy);
  const chain = [input.principalId];
  if (approvalReason !== null) {
    const problem = approvalProblem(input.approval, input, policy);
    if (!input.approval || problem) {
      return {
        ...base,
        kind: 'approval_required',
        approvalTtlMs: policy.approvalTtlMs,
        reason: approvalReason,
        ...(problem ? { invalidated: problem } : {}),
      };
    }
    chain.push(`approved-by:${input.approval.approver}`);
  }
  const limits = rateLimitsOf(rule);
  const filled = filledLimit(limits, input);
  if (filled) {
    const reason = `${req.action} is limited to ${filled.limit.max} per ${filled.limit.perMs} ms`;
    return { ...base, kind: 'rate_limited', retryAfterMs: filled.retryAfterMs, reason };
  }
  let expiresMs = now + policy.decisionTtlMs;
  if (input.approval && approvalReason !== null) expiresMs = Math.min(expiresMs, Date.parse(input.approval.expiresAt));
  return {
    ...base,
    kind: 'allowed',
    chain,
    expiresAt: new Date(expiresMs).toISOString(),
    reason: `allowed by ${policy.version} rule ${rule.action}`,
    ...(limits.length > 0 ? { rateLimits: limits } : {}),
  };
}
