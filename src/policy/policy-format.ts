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
 *       "approvalOverMinor": 50000, "rateLimit": { "max": 5, "perMs": 60000 } },
 *     { "action": "wallet.refund", "origin": "compensation" },   // only the run's saga may refund
 *     { "action": "notifications.send_email", "approval": "always" }
 *   ]
 * }
 */
import { z } from 'zod';

export const PolicyRule = z
  .object({
    action: z.string().min(1),
    /** Principal ids or prefixes ending in `*`; default: any principal of the tenant. */
    principals: z.array(z.string().min(1)).optional(),
    maxAmountMinor: z.number().int().nonnegative().optional(),
    currency: z.string().regex(/^[A-Z]{3}$/).optional(),
    /** A human must approve calls above this amount. */
    approvalOverMinor: z.number().int().nonnegative().optional(),
    /** `always`: every call of this action needs a human approval. */
    approval: z.enum(['always', 'never']).optional(),
    /** At most `max` dispatches of this action per run within `perMs`; later ones wait for the window. */
    rateLimit: z.object({ max: z.number().int().positive(), perMs: z.number().int().positive() }).strict().optional(),
    /** Who may cause this action: a model proposal, the run's own compensation (saga), or either. */
    origin: z.enum(['model', 'compensation', 'any']).default('any'),
  })
  .strict();
export type PolicyRule = z.infer<typeof PolicyRule>;

export const Policy = z
  .object({
    version: z.string().min(1),
    decisionTtlMs: z.number().int().positive().default(60_000),
    approvalTtlMs: z.number().int().positive().default(600_000),
    rules: z.array(PolicyRule),
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
