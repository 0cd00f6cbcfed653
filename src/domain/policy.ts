/**
 * A small versioned policy, evaluated in the workflow immediately before dispatch (never only at proposal
 * time). The decision binds principal, tenant, action, resource, arguments hash, policy version and expiry.
 */
import type { AuthorizationRequest } from './tool';

export interface PolicyRule {
  readonly action: string;
  /** Largest amount one call may move, in minor units of `currency`. */
  readonly maxAmountMinor?: number;
  readonly currency?: string;
}

export interface Policy {
  readonly version: string;
  readonly rules: readonly PolicyRule[];
  /** How long an allow decision stays valid; dispatch after it needs a new decision. */
  readonly decisionTtlMs: number;
}

export const DEFAULT_POLICY: Policy = {
  version: 'ledgerloop-default/1',
  rules: [{ action: 'wallet.debit', maxAmountMinor: 100_000, currency: 'EUR' }],
  decisionTtlMs: 60_000,
};

export interface Decision {
  readonly allowed: boolean;
  readonly reason: string;
  readonly policyVersion: string;
  readonly issuedAt: string;
  readonly expiresAt: string;
}

export function evaluatePolicy(
  policy: Policy,
  who: { readonly principalId: string; readonly tenant: string },
  request: AuthorizationRequest,
  nowMs: number,
): Decision {
  const base = {
    policyVersion: policy.version,
    issuedAt: new Date(nowMs).toISOString(),
    expiresAt: new Date(nowMs + policy.decisionTtlMs).toISOString(),
  };
  if (request.resourceTenant !== who.tenant) {
    return { ...base, allowed: false, reason: `tenant ${who.tenant} may not act on a resource of ${request.resourceTenant}` };
  }
  const rule = policy.rules.find((r) => r.action === request.action);
  if (rule === undefined) return { ...base, allowed: false, reason: `no rule allows ${request.action}` };
  if (rule.maxAmountMinor !== undefined && request.amountMinor !== undefined) {
    if (rule.currency !== undefined && request.currency !== rule.currency) {
      return { ...base, allowed: false, reason: `${request.action} is allowed in ${rule.currency} only` };
    }
    if (request.amountMinor > rule.maxAmountMinor) {
      return { ...base, allowed: false, reason: `amount ${request.amountMinor} exceeds the limit ${rule.maxAmountMinor}` };
    }
  }
  return { ...base, allowed: true, reason: `allowed by ${policy.version} rule ${rule.action}` };
}
