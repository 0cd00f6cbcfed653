/**
 * The policy format: versioned JSON, validated with zod. A policy is data; the authorizer evaluates the
 * current version immediately before every dispatch, so a change between proposal and dispatch takes effect.
 *
 * {
 *   "version": "acme-payments/3",
 *   "decisionTtlMs": 60000,          // how long an allow decision and its capability stay valid
 *   "approvalTtlMs": 600000,         // default validity of a human approval
 *   "rules": [
 *     { "action": "wallet.debit", "principals": ["user:*"], "maxAmountMinor": 100000, "currency": "EUR",
 *       "approvalOverMinor": 50000, "rateLimit": { "max": 5, "perMs": 60000 } },   // per principal, across runs
 *     { "action": "inventory.reserve",                                 // one limit per scope, all must hold
 *       "rateLimit": [{ "max": 10, "perMs": 60000 }, { "max": 100, "perMs": 60000, "per": "tenant" }] },
 *     { "action": "wallet.refund", "origin": "compensation" },   // only the run's saga may refund
 *     { "action": "notifications.send_email", "approval": "always" }
 *   ],
 *   "maxApprovalTtlMs": 3600000,     // cap on an approval's validity (a decision's --ttl is refused above it)
 *   "approvers": [{ "action": "*", "roles": ["approver"] }],      // roles that may approve an action ("*": any)
 *   "operators": [{ "tools": ["*"], "roles": ["operator"] }],     // roles that may resolve an UNKNOWN call of a tool
 *   "cancellers": ["operator"]       // roles that may cancel a run (its own principal always may)
 * }
 *
 * Roles come only from verified identity tokens (src/identity). A principal never approves its own call.
 */
import { z } from 'zod';

/**
 * Who shares a rate limit. `principal` (the default): every run of the principal together, so starting more
 * runs does not multiply the limit; `tenant`: every run of every principal of the tenant; `run`: each run on its
 * own (the meaning `rateLimit` had before cross-run quotas; no shared state is asked). The cross-run scopes are
 * counted in the workers' quota store (src/stores/quota-store.ts).
 */
export const RateLimitScope = z.enum(['run', 'principal', 'tenant']);
export type RateLimitScope = z.infer<typeof RateLimitScope>;

export const RateLimit = z
  .object({
    max: z.number().int().positive().max(10_000),
    perMs: z.number().int().positive().max(86_400_000),
    per: RateLimitScope.default('principal'),
  })
  .strict();
export type RateLimit = z.infer<typeof RateLimit>;

/** One limit, or one per scope (at most one each of run, principal, tenant); every one must hold. */
const RateLimits = z.union([
  RateLimit,
  z
    .array(RateLimit)
    .min(1)
    .max(3)
    .refine(
      (ls) => new Set(ls.map((l) => l.per)).size === ls.length,
      'at most one rate limit per scope (run, principal, tenant)',
    ),
]);

export const PolicyRule = z
  .object({
    action: z.string().min(1),
    /** Principal ids or prefixes ending in `*`; default: any principal of the tenant. */
    principals: z.array(z.string().min(1)).optional(),
    maxAmountMinor: z.number().int().nonnegative().optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/)
      .optional(),
    /** A human must approve calls above this amount. */
    approvalOverMinor: z.number().int().nonnegative().optional(),
    /** `always`: every call of this action needs a human approval. */
    approval: z.enum(['always', 'never']).optional(),
    /**
     * At most `max` dispatches of this action within `perMs` per principal (default), per tenant or per run
     * (`per`); later ones wait for the window. A list sets one limit per scope; all of them must hold.
     */
    rateLimit: RateLimits.optional(),
    /** Who may cause this action: a model proposal, the run's own compensation (saga), or either. */
    origin: z.enum(['model', 'compensation', 'any']).default('any'),
  })
  .strict();
export type PolicyRule = z.infer<typeof PolicyRule>;

export const ApproverRule = z.object({ action: z.string().min(1), roles: z.array(z.string().min(1)).min(1) }).strict();
export type ApproverRule = z.infer<typeof ApproverRule>;
export const OperatorRule = z
  .object({ tools: z.array(z.string().min(1)).min(1), roles: z.array(z.string().min(1)).min(1) })
  .strict();
export type OperatorRule = z.infer<typeof OperatorRule>;

export const Policy = z
  .object({
    version: z.string().min(1),
    decisionTtlMs: z.number().int().positive().default(60_000),
    approvalTtlMs: z.number().int().positive().default(600_000),
    rules: z.array(PolicyRule),
    /** The longest validity an approval may be given (default 1 h); `approvalTtlMs` above it is capped to it. */
    maxApprovalTtlMs: z
      .number()
      .int()
      .positive()
      .max(7 * 86_400_000)
      .default(3_600_000),
    /** Which verified roles may approve which action (`*`: every action). Default: role `approver`, any action. */
    approvers: z.array(ApproverRule).default([{ action: '*', roles: ['approver'] }]),
    /** Which verified roles may resolve an UNKNOWN call of which tools. Default: role `operator`, every tool. */
    operators: z.array(OperatorRule).default([{ tools: ['*'], roles: ['operator'] }]),
    /** Verified roles that may cancel a run, besides the run's own principal. Default: `operator`. */
    cancellers: z.array(z.string().min(1)).default(['operator']),
  })
  .strict();
export type Policy = z.infer<typeof Policy>;

export const DEFAULT_POLICY: Policy = Policy.parse({
  version: 'ledgerloop-default/1',
  rules: [
    { action: 'wallet.debit', maxAmountMinor: 100_000, currency: 'EUR', approvalOverMinor: 50_000 },
    { action: 'wallet.refund', maxAmountMinor: 100_000, currency: 'EUR', origin: 'compensation' },
    { action: 'inventory.reserve' },
    { action: 'inventory.release', origin: 'compensation' },
    { action: 'shipping.schedule' },
    { action: 'shipping.cancel', origin: 'compensation' },
    { action: 'orders.mark_fulfilled' },
    { action: 'notifications.send_email', approval: 'always' },
  ],
});
