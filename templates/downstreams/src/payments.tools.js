// @ts-check
// Two tools on a payment provider that speaks none of Ledgerloop's contract (a Stripe-style API: an
// `Idempotency-Key` kept 24 h, 409 while the key is in flight, 400 for the key with other parameters, search by
// metadata; no fence, no seal). Pure declarations: they run in the workflow sandbox.
// - `charge_card`: an HTTP tool. Ledgerloop sends the request itself, reads the statuses as declared here, and
//   looks a lost charge up by the metadata the request set.
// - `refund_charge`: a function tool. The worker runs `execute` (src/functions.js) with the provider's SDK; it is
//   `charge_card`'s compensation, registered before the charge is sent.
const { z } = require('zod');
const { defineTool } = require('ledgerloop/workflow-tools');

const DAY_MS = 86_400_000;
const Customer = z.string().regex(/^cus_[A-Za-z0-9]{1,32}$/, 'a customer id like cus_alice');
const Money = z.object({ minor: z.number().int().positive(), currency: z.enum(['EUR', 'USD']) }).strict();
/** The metadata field both tools write their operation key into: the provider's search finds a call by it. */
const KEY_FIELD = 'ledgerloop_key';

const chargeCard = defineTool({
  name: 'charge_card',
  version: 1,
  description: 'Charge a customer through the payment provider. The same charge proposed again is the same charge.',
  args: z.object({ customer: Customer, amount: Money }).strict(),
  result: z.object({ id: z.string(), status: z.string(), amount: z.number(), currency: z.string() }).passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'vendor-payments',
  transport: {
    kind: 'http',
    method: 'POST',
    path: '/v1/charges',
    encoding: 'form',
    body: (args, key) => {
      const a = /** @type {{ customer: string, amount: { minor: number, currency: string } }} */ (args);
      const currency = a.amount.currency.toLowerCase();
      return { customer: a.customer, amount: a.amount.minor, currency, metadata: { [KEY_FIELD]: key } };
    },
    key: { header: 'Idempotency-Key', prefix: 'll_' },
    keyRetentionMs: DAY_MS, // resent under the same key only inside it, counted from the first send
    maxInFlightMs: 30_000, // a not_found proves absence only this long after the last send
    statuses: {
      inFlight: [{ status: 409, field: 'error.code', equals: 'idempotency_key_in_use' }],
      keyReused: [{ status: 400, field: 'error.type', equals: 'idempotency_error' }],
      refused: [{ status: 402 }, { status: 400, field: 'error.type', equals: 'invalid_request_error' }],
      notProcessed: [{ status: 429 }],
    },
    lookup: {
      by: 'metadata',
      path: '/v1/charges/search',
      query: { query: `metadata["${KEY_FIELD}"]:"{key}"` },
      results: 'data',
      lagMs: 2_000,
      failedWhen: { field: 'status', equals: 'failed' },
    },
    auth: { secret: 'PAYMENTS_API_KEY' },
    errorCodeField: 'error.code',
    codes: { card_declined: 'Payments.CardDeclined' },
  },
  effectScope: 'payments.charge',
  idempotency: 'idempotent_by_key',
  canonicalize: (a, ctx) => ({ tenant: ctx.tenant, customer: a.customer, amount: a.amount }),
  authorization: (a, ctx) => ({
    action: 'payments.charge',
    resource: `${ctx.tenant}/customer/${a.customer}`,
    resourceTenant: ctx.tenant,
    amountMinor: a.amount.minor,
    currency: a.amount.currency,
  }),
  compensation: {
    kind: 'compensate',
    tool: 'refund_charge',
    args: (fwd) => ({ amount: fwd.args.amount, chargeOperationKey: fwd.operationKey }),
  },
  summary: (a) => `charge_card ${a.customer} ${a.amount.minor} ${a.amount.currency}`,
  promote: (r) => ({ id: r.id, status: r.status }),
});

const refundCharge = defineTool({
  name: 'refund_charge',
  version: 1,
  description: 'Refund a charge made in this run, named by the operation key that made it.',
  args: z.object({ amount: Money, chargeOperationKey: z.string().regex(/^op_[0-9a-f]{40}$/) }).strict(),
  result: z.object({ id: z.string(), status: z.string(), amount: z.number() }).passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'vendor-payments',
  transport: {
    kind: 'function',
    secrets: ['PAYMENTS_API_KEY'],
    // The SDK sends the operation key as the provider's Idempotency-Key; a lost refund is found by its metadata.
    promises: { keyRetentionMs: DAY_MS, lookup: 'by_metadata', lookupLagMs: 2_000, maxInFlightMs: 30_000 },
  },
  effectScope: 'payments.refund',
  idempotency: 'idempotent_by_key',
  canonicalize: (a, ctx) => ({ tenant: ctx.tenant, amount: a.amount, chargeOperationKey: a.chargeOperationKey }),
  authorization: (a, ctx) => ({
    action: 'payments.refund',
    resource: `${ctx.tenant}/charge/${a.chargeOperationKey}`,
    resourceTenant: ctx.tenant,
    amountMinor: a.amount.minor,
    currency: a.amount.currency,
  }),
  compensation: { kind: 'none' },
  summary: (a) => `refund_charge ${a.amount.minor} ${a.amount.currency} of ${a.chargeOperationKey.slice(0, 14)}`,
  promote: (r) => ({ id: r.id, status: r.status }),
});

module.exports = { paymentsTools: [chargeCard, refundCharge], chargeCard, refundCharge, KEY_FIELD };
