/** The orders service's tool: mark an order fulfilled, which publishes `OrderFulfilled` through its outbox. */
import { z } from 'zod';
import { defineTool } from '../domain/tool';
import { onResource, OrderId, receiptResult } from './common';

export const ordersMarkFulfilled = defineTool({
  name: 'orders_mark_fulfilled',
  version: 1,
  description: 'Mark an order of the caller tenant fulfilled. Publishes OrderFulfilled: the customer is emailed.',
  args: z.object({ orderId: OrderId }).strict(),
  result: receiptResult({
    orderId: z.string(),
    status: z.literal('fulfilled'),
    eventId: z.string(),
  }),
  maxArgumentBytes: 512,
  maxResultBytes: 4096,
  service: 'orders',
  route: '/v1/fulfilments',
  effectScope: 'orders.fulfil',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({ tenant: ctx.tenant, orderId: args.orderId }),
  authorization: (args, ctx) => onResource('orders.mark_fulfilled', ctx.tenant, 'order', args.orderId),
  // Irreversible: the committed fulfilment is relayed as an event whose consumer emails the customer, and no
  // route un-publishes it. Run it as the saga's pivot, after every compensable step succeeded.
  compensation: { kind: 'irreversible' },
  summary: (args) => `orders_mark_fulfilled ${args.orderId}`,
  promote: (r) => ({ receipt: r.receipt, orderId: r.orderId, status: r.status }),
});

export const ordersTools = [ordersMarkFulfilled] as const;
