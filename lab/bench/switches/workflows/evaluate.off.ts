/**
 * Bench switch `authorization`, its workflow half (off, in the workflow bundle): stands in for
 * src/policy/evaluate.ts. Every call is allowed without reading the policy's rules (tenant binding, amounts,
 * currency, approvals, the run's own rate limits); only the matched rule's cross-run limits are handed on, so the
 * quota (a switch of its own) is asked exactly as with the real evaluator. The worker's half (authorize.off.ts)
 * signs without re-deriving or re-evaluating the call, and the cell's worker holds the smallest policy a run can
 * be held to.
 *
 * Workflow-safe: pure.
 */
import type { AuthorizationInput } from '../../../../src/domain/authorization';
import type { Policy } from '../../../../src/domain/policy-format';
import type { evaluate as realEvaluate } from '../../../../src/policy/evaluate';
import { rateLimitsOf } from '../../../../src/policy/policy-rules';
import type { SwitchMark } from '../marks';

const MARK: SwitchMark = 'ledgerloop-bench-switch:authorization';

/** What the real evaluator returns when it allows a call (a type-only import: the real module is not bundled). */
type Allowed = Extract<ReturnType<typeof realEvaluate>, { kind: 'allowed' }>;

export function evaluate(policy: Policy, input: AuthorizationInput): Allowed {
  const rule = policy.rules.find((r) => r.action === input.request.action);
  const limits = rule ? rateLimitsOf(rule) : [];
  return {
    kind: 'allowed',
    reason: MARK,
    chain: [input.principalId],
    policyVersion: policy.version,
    issuedAt: new Date(input.nowMs).toISOString(),
    expiresAt: new Date(input.nowMs + policy.decisionTtlMs).toISOString(),
    ...(limits.length > 0 ? { rateLimits: limits } : {}),
  };
}
