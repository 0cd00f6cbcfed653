/**
 * Tools on the transports other than Ledgerloop's contract, for the workflow and integration tiers:
 * - `ledger_post`: a function tool over a ledger SDK that takes an idempotency key (kept 24 h) and looks up by key;
 * - `mail_send`: a function tool over a mail API that can be asked by key but neither dedupes nor seals: only the
 *   declared in-flight window proves that nothing was sent;
 * - `payments_charge`: a Stripe-style HTTP API (services/vendor-payments), key header with a vendor prefix, 24 h
 *   retention, 409 in flight, 400 on the same key with other parameters, lookup by a metadata search;
 * - `payments_refund`: a function tool over that API's SDK-shaped client (test/support/transports/payments-sdk.ts),
 *   the charge's compensation, refunding by the charge's operation key.
 */
import { z } from 'zod';
import { defineTool } from '../../../src/domain/tool';

const Account = z.string().regex(/^[a-z0-9_]{1,32}$/);
const DAY_MS = 86_400_000;

export const ledgerPost = defineTool({
  name: 'ledger_post',
  version: 1,
  description: 'Post an amount to a ledger account through the ledger SDK.',
  args: z.object({ account: Account, amountMinor: z.number().int().positive() }).strict(),
  result: z.object({ id: z.string(), account: z.string(), amountMinor: z.number() }).passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: 'ledger-api',
  transport: {
    kind: 'function',
    secrets: ['LEDGER_API_KEY'],
    promises: { keyRetentionMs: DAY_MS, lookup: 'by_key', maxInFlightMs: 600_000 },
  },
  effectScope: 'ledger.post',
  idempotency: 'idempotent_by_key',
  canonicalize: (a, ctx) => ({ tenant: ctx.tenant, account: a.account, amountMinor: a.amountMinor }),
  authorization: (a, ctx) => ({
    action: 'ledger.post',
    resource: `${ctx.tenant}/account/${a.account}`,
    resourceTenant: ctx.tenant,
  }),
  compensation: { kind: 'none' },
  summary: (a) => `ledger_post ${a.account} ${a.amountMinor}`,
  promote: (r) => ({ id: r.id, amountMinor: r.amountMinor }),
});

export const mailSend = defineTool({
  name: 'mail_send',
  version: 1,
  description: 'Send an email through the mail API.',
  args: z.object({ to: z.string().email(), subject: z.string().min(1).max(200) }).strict(),
  result: z.object({ id: z.string(), to: z.string() }).passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: 'mailer',
  // Asked by key, but neither deduped nor sealed: a request may land up to ten minutes after it was sent.
  transport: { kind: 'function', promises: { lookup: 'by_key', maxInFlightMs: 600_000 } },
  effectScope: 'mail.send',
  idempotency: 'reconcilable_by_lookup',
  canonicalize: (a, ctx) => ({ tenant: ctx.tenant, to: a.to.toLowerCase(), subject: a.subject.normalize('NFC') }),
  authorization: (a, ctx) => ({
    action: 'mail.send',
    resource: `${ctx.tenant}/mailbox/${a.to}`,
    resourceTenant: ctx.tenant,
  }),
  compensation: { kind: 'none' },
  summary: (a) => `mail_send ${a.to}`,
  promote: (r) => ({ id: r.id }),
});

const Money = z.object({ minor: z.number().int().positive(), currency: z.string().regex(/^[A-Z]{3}$/) }).strict();

export const paymentsCharge = defineTool({
  name: 'payments_charge',
  version: 1,
  description: 'Charge a customer through the payment provider.',
  args: z.object({ customer: z.string().regex(/^cus_[A-Za-z0-9]{1,32}$/), amount: Money }).strict(),
  result: z.object({ id: z.string(), status: z.string(), amount: z.number(), currency: z.string() }).passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'payments',
  transport: {
    kind: 'http',
    method: 'POST',
    path: '/v1/charges',
    encoding: 'form',
    body: (args, key) => {
      const a = args as { customer: string; amount: { minor: number; currency: string } };
      return {
        customer: a.customer,
        amount: a.amount.minor,
        currency: a.amount.currency.toLowerCase(),
        metadata: { ledgerloop_key: key },
      };
    },
    key: { header: 'Idempotency-Key', prefix: 'll_' },
    keyRetentionMs: DAY_MS,
    maxInFlightMs: 30_000,
    statuses: {
      inFlight: [{ status: 409, field: 'error.code', equals: 'idempotency_key_in_use' }],
      keyReused: [{ status: 400, field: 'error.type', equals: 'idempotency_error' }],
      refused: [{ status: 402 }, { status: 400, field: 'error.type', equals: 'invalid_request_error' }],
      notProcessed: [{ status: 429 }],
    },
    lookup: {
      by: 'metadata',
      path: '/v1/charges/search',
      query: { query: 'metadata["ledgerloop_key"]:"{key}"' },
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
  canonicalize: (a, ctx) => ({
    tenant: ctx.tenant,
    customer: a.customer,
    amount: { minor: a.amount.minor, currency: a.amount.currency },
  }),
  authorization: (a, ctx) => ({
    action: 'payments.charge',
    resource: `${ctx.tenant}/customer/${a.customer}`,
    resourceTenant: ctx.tenant,
    amountMinor: a.amount.minor,
    currency: a.amount.currency,
  }),
  compensation: {
    kind: 'compensate',
    tool: 'payments_refund',
    args: (fwd) => ({ amount: fwd.args.amount, chargeOperationKey: fwd.operationKey }),
  },
  summary: (a) => `payments_charge ${a.customer} ${a.amount.minor} ${a.amount.currency}`,
  promote: (r) => ({ id: r.id, status: r.status }),
});

export const paymentsRefund = defineTool({
  name: 'payments_refund',
  version: 1,
  description: 'Refund a charge, named by the charge operation key. Used as a compensation.',
  args: z.object({ amount: Money, chargeOperationKey: z.string().regex(/^op_[0-9a-f]{40}$/) }).strict(),
  result: z.object({ id: z.string(), status: z.string() }).passthrough(),
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'payments',
  transport: {
    kind: 'function',
    secrets: ['PAYMENTS_API_KEY'],
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
  // No `forwardAbsentReasons`: the charge is found by a search that lags writes, so "no such charge" is no proof.
  compensation: { kind: 'none' },
  summary: (a) => `payments_refund ${a.amount.minor} for ${a.chargeOperationKey.slice(0, 14)}`,
  promote: (r) => ({ id: r.id, status: r.status }),
});

export const transportTools = [ledgerPost, mailSend, paymentsCharge, paymentsRefund] as const;
