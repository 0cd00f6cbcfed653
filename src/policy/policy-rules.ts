/**
 * What workflow code asks of a held policy: its rate limits and who may approve, resolve or cancel. Pure functions
 * over the parsed policy, in a module of their own: `policy-format.ts` builds the zod schemas (and parses the
 * default policy) when it is evaluated, and every workflow run evaluates the modules it imports afresh, so workflow
 * code imports that module as types only (eslint.config.mjs; docs/performance.md, "Per-run module cost").
 */
import type { Policy, PolicyRule, RateLimit } from '../domain/policy-format';

/** The rule's rate limits as a list (empty without `rateLimit`). */
export function rateLimitsOf(rule: PolicyRule): readonly RateLimit[] {
  if (!rule.rateLimit) return [];
  return Array.isArray(rule.rateLimit) ? rule.rateLimit : [rule.rateLimit];
}

const hasAny = (roles: readonly string[], allowed: readonly string[]): boolean =>
  roles.some((r) => allowed.includes(r));

/** The longest rate-limit window any rule of `policy` sets (ms), or 0 when none does: how far back a run counts. */
export function longestWindowMs(policy: Policy): number {
  let longest = 0;
  for (const rule of policy.rules) for (const limit of rateLimitsOf(rule)) longest = Math.max(longest, limit.perMs);
  return longest;
}

/** Whether a verified actor with `roles` may approve `action` under `policy`. */
export function mayApprove(policy: Policy, action: string, roles: readonly string[]): boolean {
  return policy.approvers.some((r) => (r.action === '*' || r.action === action) && hasAny(roles, r.roles));
}

/** Whether a verified actor with `roles` may resolve a call of `tool` under `policy`. */
export function mayResolve(policy: Policy, tool: string, roles: readonly string[]): boolean {
  return policy.operators.some((r) => (r.tools.includes('*') || r.tools.includes(tool)) && hasAny(roles, r.roles));
}

/** Whether a verified actor with `roles` may cancel a run (the run's own principal always may). */
export function mayCancel(policy: Policy, roles: readonly string[]): boolean {
  return hasAny(roles, policy.cancellers);
}
