/**
 * The refund tool, declared once for Ledgerloop: what the baseline's `refund_order` tool and its activity said by
 * hand (the key, the lost-response handling, the lookup), said as a declaration of the payments service's own
 * promises. The workflow validates, keys and authorizes with it; the worker's HTTP transport sends it. Loaded
 * lazily by ./workflow-tools.ts, once per worker.
 */
import { z } from 'zod';
import { defineTool } from 'ledgerloop/workflow-tools';

const DAY_MS = 86_400_000;

export const refundOrder = defineTool({
  name: 'refund_order',
  version: 1,
  description: 'Refund part or all of an order (in cents). One refund per order.',
  args: z
    .object({
      orderId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
      amountMinor: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      currency: z.string().regex(/^[A-Z]{3}$/),
    })
    .strict(),
  result: z
    .object({ refundId: z.string(), orderId: z.string(), amountMinor: z.number(), currency: z.string() })
    .passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: 'payments',
  transport: {
    kind: 'http',
    method: 'POST',
    path: '/v1/refunds',
    key: { header: 'Idempotency-Key' },
    // The payments service answers a same-key, same-body repeat with the refund it kept.
    keyRetentionMs: DAY_MS,
    maxInFlightMs: 30_000,
    statuses: {
      keyReused: [{ status: 409 }],
      refused: [{ status: 400 }, { status: 404 }, { status: 422 }],
    },
    lookup: { by: 'key', path: '/v1/refunds', query: { idempotency_key: '{key}' }, results: 'data' },
    receiptField: 'refundId',
    errorCodeField: 'error',
    codes: {
      refund_exceeds_order: 'Payments.RefundExceedsOrder',
      order_not_found: 'Payments.OrderNotFound',
      currency_mismatch: 'Payments.CurrencyMismatch',
    },
  },
  effectScope: 'payments.refund',
  idempotency: 'idempotent_by_key',
  canonicalize: (a, ctx) => ({
    tenant: ctx.tenant,
    orderId: a.orderId,
    amountMinor: a.amountMinor,
    currency: a.currency,
  }),
  authorization: (a, ctx) => ({
    action: 'payments.refund',
    resource: `${ctx.tenant}/order/${a.orderId}`,
    resourceTenant: ctx.tenant,
    amountMinor: a.amountMinor,
    currency: a.currency,
  }),
  // A refund paid out is not taken back by a program: an approval above 100 EUR (policy.json) guards it.
  compensation: { kind: 'irreversible' },
  summary: (a) => `refund ${a.orderId} ${a.amountMinor} ${a.currency}`,
  promote: (r) => ({ refundId: r.refundId, orderId: r.orderId, amountMinor: r.amountMinor, currency: r.currency }),
});

export const refundTools = [refundOrder] as const;
