/** The shipping service's tools: schedule a shipment (compensable until dispatch) and cancel it. */
import { z } from 'zod';
import { defineTool } from '../domain/tool';
import { normalizeText, onResource, OperationKeyRef, OrderId, receiptResult, shortKey } from './common';

const Address = z
  .object({
    country: z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code such as DE'),
    postalCode: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 -]{0,15}$/, 'a postal code such as 10115'),
    line1: z.string().min(1).max(200).regex(/\S/, 'a street line'),
  })
  .strict();

const ShipmentResult = receiptResult({
  orderId: z.string(),
  status: z.enum(['scheduled', 'cancelled']),
});

export const shippingSchedule = defineTool({
  name: 'shipping_schedule',
  version: 1,
  description: 'Schedule the shipment of an order in the caller tenant to a postal address.',
  args: z.object({ orderId: OrderId, address: Address }).strict(),
  result: ShipmentResult,
  maxArgumentBytes: 2048,
  maxResultBytes: 8192,
  service: 'shipping',
  route: '/v1/shipments',
  effectScope: 'shipping.schedule',
  idempotency: 'idempotent_by_key',
  // Upper-case country and postal code, NFC text with collapsed whitespace: one address, one hash.
  canonicalize: (args, ctx) => ({
    tenant: ctx.tenant,
    orderId: args.orderId,
    address: {
      country: args.address.country.toUpperCase(),
      postalCode: normalizeText(args.address.postalCode).toUpperCase(),
      line1: normalizeText(args.address.line1),
    },
  }),
  authorization: (args, ctx) => onResource('shipping.schedule', ctx.tenant, 'order', args.orderId),
  compensation: {
    kind: 'compensate',
    tool: 'shipping_cancel',
    args: (fwd) => ({ shipmentOperationKey: fwd.operationKey }),
  },
  summary: (args) => `shipping_schedule order ${args.orderId} to ${args.address.country.toUpperCase()}`,
  promote: (r) => ({ receipt: r.receipt, orderId: r.orderId, status: r.status }),
});

export const shippingCancel = defineTool({
  name: 'shipping_cancel',
  version: 1,
  description: 'Cancel a scheduled shipment, named by its operation key. Used as a compensation.',
  args: z.object({ shipmentOperationKey: OperationKeyRef }).strict(),
  result: ShipmentResult,
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'shipping',
  route: '/v1/cancellations',
  effectScope: 'shipping.cancel',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({ tenant: ctx.tenant, shipmentOperationKey: args.shipmentOperationKey }),
  authorization: (args, ctx) => onResource('shipping.cancel', ctx.tenant, 'shipment', args.shipmentOperationKey),
  compensation: { kind: 'none' },
  forwardAbsentReasons: ['Shipping.UnknownShipment'],
  summary: (args) => `shipping_cancel shipment ${shortKey(args.shipmentOperationKey)}`,
  promote: (r) => ({ receipt: r.receipt, orderId: r.orderId, status: r.status }),
});

export const shippingTools = [shippingSchedule, shippingCancel] as const;
