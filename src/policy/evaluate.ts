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

export function evaluate(
  policy: Policy,
  input: AuthorizationInput,
):
  | Exclude<AuthorizationDecision, { kind: 'allowed' }>
  | {
      kind: 'allowed';
      reason: string;
      chain: string[];
      policyVersion: string;
      issuedAt: string;
      expiresAt: string;
      rateLimits?: readonly RateLimit[];
    } {
  const now = input.nowMs;
  const base = { policyVersion: policy.version, issuedAt: new Date(now).toISOString() };
  const req = input.request;
  if (req.resourceTenant !== input.tenant) {
    return {
      ...base,
      kind: 'denied',
      code: 'Tenant.Mismatch',
      reason: `${input.principalId} of ${input.tenant} may not act on a resource of ${req.resourceTenant}`,
    };
  }
  const rule = policy.rules.find(
    (r) =>
      r.action === req.action &&
      (r.origin === 'any' || r.origin === input.origin) &&
      principalMatches(r, input.principalId),
  );
  if (!rule) {
    return {
      ...base,
      kind: 'denied',
      code: 'Authorization.Denied',
      reason: `no rule of ${policy.version} lets ${input.principalId} do ${req.action} as ${input.origin}`,
    };
  }
  if (rule.currency !== undefined && req.currency !== undefined && req.currency !== rule.currency) {
    return {
      ...base,
      kind: 'denied',
      code: 'Authorization.Denied',
      reason: `${req.action} is allowed in ${rule.currency} only`,
    };
  }
  if (rule.maxAmountMinor !== undefined && (req.amountMinor ?? 0) > rule.maxAmountMinor) {
    return {
      ...base,
      kind: 'denied',
      code: 'Authorization.Denied',
      reason: `amount ${req.amountMinor} exceeds the limit ${rule.maxAmountMinor} of ${policy.version}`,
    };
  }
  const approvalReason =
    rule.approval === 'never'
      ? null
      : rule.approval === 'always'
        ? `${policy.version} requires approval for ${req.action}`
        : rule.approvalOverMinor !== undefined && (req.amountMinor ?? 0) > rule.approvalOverMinor
          ? `amount ${req.amountMinor} is over the approval threshold ${rule.approvalOverMinor}`
          : input.toolApprovalReason;
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
  // The run's own dispatches: every limit holds within one run too (a principal's or tenant's window contains
  // the run's); the cross-run count is the tenant quota workflow's (workflows/quota-client.ts).
  for (const limit of rateLimitsOf(rule)) {
    const windowStart = now - limit.perMs;
    const inWindow = input.recentDispatches.filter((t) => t > windowStart).sort((a, b) => a - b);
    if (inWindow.length >= limit.max) {
      const retryAfterMs = inWindow[inWindow.length - limit.max]! + limit.perMs - now;
      return {
        ...base,
        kind: 'rate_limited',
        retryAfterMs: Math.max(1, retryAfterMs),
        reason: `${req.action} is limited to ${limit.max} per ${limit.perMs} ms`,
      };
    }
  }
  let expiresMs = now + policy.decisionTtlMs;
  if (input.approval && approvalReason !== null) expiresMs = Math.min(expiresMs, Date.parse(input.approval.expiresAt));
  const limits = rateLimitsOf(rule);
  return {
    ...base,
    kind: 'allowed',
    chain,
    expiresAt: new Date(expiresMs).toISOString(),
    reason: `allowed by ${policy.version} rule ${rule.action}`,
    ...(limits.length > 0 ? { rateLimits: limits } : {}),
  };
}
