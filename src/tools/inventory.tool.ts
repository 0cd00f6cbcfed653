/** The inventory's tools: reserve stock (a compensable effect) and release a reservation (its compensation). */
import { z } from 'zod';
import { defineTool } from '../domain/tool';
import { onResource, OperationKeyRef, receiptResult, shortKey } from './common';

const Sku = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a SKU like SKU-1');

export const inventoryReserve = defineTool({
  name: 'inventory_reserve',
  version: 1,
  description: 'Reserve a quantity of a SKU in the caller tenant for an order. Holds stock until released.',
  args: z.object({ sku: Sku, quantity: z.number().int().min(1).max(10_000) }).strict(),
  result: receiptResult({
    sku: z.string(),
    quantity: z.number().int(),
    availableAfter: z.number().int(),
  }),
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'inventory',
  route: '/v1/reservations',
  effectScope: 'inventory.reserve',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({ tenant: ctx.tenant, sku: args.sku, quantity: args.quantity }),
  authorization: (args, ctx) => onResource('inventory.reserve', ctx.tenant, 'sku', args.sku),
  // Named by the forward key, so the release is computable before the reservation is sent; the inventory
  // answers `Inventory.UnknownReservation` (no effect, key sealed) when the reservation never committed.
  compensation: {
    kind: 'compensate',
    tool: 'inventory_release',
    args: (fwd) => ({ reservationOperationKey: fwd.operationKey }),
  },
  summary: (args) => `inventory_reserve ${args.quantity} x ${args.sku}`,
  promote: (r) => ({ receipt: r.receipt, sku: r.sku, quantity: r.quantity }),
});

export const inventoryRelease = defineTool({
  name: 'inventory_release',
  version: 1,
  description: 'Release a stock reservation, named by its operation key. Used as a compensation.',
  args: z.object({ reservationOperationKey: OperationKeyRef }).strict(),
  result: receiptResult({
    sku: z.string(),
    quantity: z.number().int(),
    availableAfter: z.number().int(),
  }),
  maxArgumentBytes: 1024,
  maxResultBytes: 8192,
  service: 'inventory',
  route: '/v1/releases',
  effectScope: 'inventory.release',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({ tenant: ctx.tenant, reservationOperationKey: args.reservationOperationKey }),
  authorization: (args, ctx) =>
    onResource('inventory.release', ctx.tenant, 'reservation', args.reservationOperationKey),
  compensation: { kind: 'none' },
  forwardAbsentReasons: ['Inventory.UnknownReservation'],
  summary: (args) => `inventory_release reservation ${shortKey(args.reservationOperationKey)}`,
  promote: (r) => ({ receipt: r.receipt, sku: r.sku, quantity: r.quantity }),
});

export const inventoryTools = [inventoryReserve, inventoryRelease] as const;
