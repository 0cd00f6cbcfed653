// @ts-check
// `record_order`: the team's own orders service, on the team's own PostgreSQL (src/orders-service.js). The kit
// puts Ledgerloop's contract on it: the order row, its key row and the fence check commit in one transaction.
const { z } = require('zod');
const { defineTool, receiptResult } = require('ledgerloop/workflow-tools');

const recordOrder = defineTool({
  name: 'record_order',
  version: 1,
  description: 'Record a customer order. The same order proposed again in this run is the same order.',
  args: z
    .object({
      order: z.string().regex(/^ord_[a-z0-9]{1,32}$/, 'an order id like ord_1001'),
      customer: z.string().regex(/^cus_[A-Za-z0-9]{1,32}$/),
      amountMinor: z.number().int().positive().max(10_000_000),
    })
    .strict(),
  result: receiptResult({ order: z.string(), amountMinor: z.number() }),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: 'orders',
  route: '/v1/orders',
  effectScope: 'orders.record',
  idempotency: 'idempotent_by_key',
  canonicalize: (a, ctx) => ({ tenant: ctx.tenant, order: a.order, customer: a.customer, amountMinor: a.amountMinor }),
  authorization: (a, ctx) => ({
    action: 'orders.record',
    resource: `${ctx.tenant}/order/${a.order}`,
    resourceTenant: ctx.tenant,
  }),
  compensation: { kind: 'none' },
  summary: (a) => `record_order ${a.order} ${a.amountMinor}`,
  promote: (r) => ({ receipt: r.receipt, order: r.order }),
});

module.exports = { ordersTools: [recordOrder] };
