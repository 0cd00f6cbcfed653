/**
 * The orders service's business data. Marking an order fulfilled and writing its `OrderFulfilled` message
 * intent into the outbox happen in ONE SQLite transaction (the idempotency store's commit transaction): both
 * rows exist, or neither does. The message is published later by the relay, never from the request.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { Id } from '../body-schemas';
import { BusinessRejection, type AppliedEffect } from '../idempotency-store';
import type { MutationHeaders } from '../idempotent-route';
import { deriveEventId, insertOutboxRow, migrateOutbox } from './outbox';

/** Stable reasons of the orders service's 422 rejections. */
export const OrdersReason = {
  UnknownOrder: 'Orders.UnknownOrder',
  AlreadyFulfilled: 'Orders.AlreadyFulfilled',
} as const;

/** The type of the message a fulfilment announces. */
export const ORDER_FULFILLED = 'OrderFulfilled';

/** Body of `POST /v1/fulfilments`. */
export const FulfilBody = z.strictObject({ tenant: Id, orderId: Id });
export type FulfilBody = z.infer<typeof FulfilBody>;

/** Body of `POST /admin/orders`: creates an open order (or updates its customer email). */
export const SeedOrderBody = z.strictObject({
  tenant: Id,
  orderId: Id,
  customerEmail: z
    .string()
    .max(254)
    .regex(/^[^\s@]+@[^\s@]+$/, 'an email address'),
});
export type SeedOrderBody = z.infer<typeof SeedOrderBody>;

/** The payload of an `OrderFulfilled` event, as the relay publishes it to `POST /v1/events`. */
export interface OrderFulfilledEvent {
  readonly eventId: string;
  readonly type: typeof ORDER_FULFILLED;
  readonly tenant: string;
  readonly orderId: string;
  readonly customerEmail: string;
  readonly fulfilledAt: string;
  /** The operation key of the fulfilment that wrote the event. */
  readonly sourceOperationKey: string;
}

/** An order as `GET /v1/orders/:tenant/:orderId` returns it. */
export interface Order {
  readonly tenant: string;
  readonly orderId: string;
  readonly customerEmail: string;
  readonly status: 'open' | 'fulfilled';
  readonly fulfilledBy: string | null;
  readonly eventId: string | null;
}

/** Test hooks inside the fulfilment transaction. */
export interface FulfilmentHooks {
  /** Runs after the order row was updated and before the outbox row is written: the dual-write gap. */
  readonly betweenWrites?: () => void;
}

interface OrderRow {
  readonly customer_email: string;
  readonly status: Order['status'];
  readonly fulfilled_by: string | null;
  readonly event_id: string | null;
}

/** Creates the orders and outbox tables if they do not exist. */
export function migrateOrders(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS orders (
      tenant         TEXT NOT NULL,
      order_id       TEXT NOT NULL,
      customer_email TEXT NOT NULL,
      status         TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'fulfilled')),
      fulfilled_by   TEXT,
      fulfilled_at   INTEGER,
      event_id       TEXT,
      PRIMARY KEY (tenant, order_id)
    );
  `);
  migrateOutbox(db);
}

/** Creates an open order, or updates the customer email of an existing one (admin seeding). */
export function seedOrder(db: Database, seed: SeedOrderBody): Order {
  db.prepare(
    `INSERT INTO orders (tenant, order_id, customer_email) VALUES (?, ?, ?)
     ON CONFLICT (tenant, order_id) DO UPDATE SET customer_email = excluded.customer_email`,
  ).run(seed.tenant, seed.orderId, seed.customerEmail);
  return getOrder(db, seed.tenant, seed.orderId) as Order;
}

/** The order, or undefined when it does not exist. */
export function getOrder(db: Database, tenant: string, orderId: string): Order | undefined {
  const row = getRow(db, tenant, orderId);
  if (row === undefined) return undefined;
  return {
    tenant,
    orderId,
    customerEmail: row.customer_email,
    status: row.status,
    fulfilledBy: row.fulfilled_by,
    eventId: row.event_id,
  };
}

/**
 * Marks the order fulfilled and writes its `OrderFulfilled` outbox row carrying the request's fence, in the
 * caller's transaction. Rejects unknown orders and orders already fulfilled under another key.
 */
export function applyFulfilment(
  db: Database,
  body: FulfilBody,
  key: string,
  request: MutationHeaders,
  hooks: FulfilmentHooks = {},
): AppliedEffect {
  const { tenant, orderId } = body;
  const row = getRow(db, tenant, orderId);
  if (row === undefined) throw new BusinessRejection(OrdersReason.UnknownOrder, `no order ${tenant}/${orderId}`);
  if (row.status === 'fulfilled') {
    throw new BusinessRejection(OrdersReason.AlreadyFulfilled, `order ${orderId} was fulfilled by another request`, {
      eventId: row.event_id,
    });
  }
  const now = Date.now();
  const eventId = deriveEventId(ORDER_FULFILLED, tenant, orderId, key);
  db.prepare(
    `UPDATE orders SET status = 'fulfilled', fulfilled_by = ?, fulfilled_at = ?, event_id = ?
     WHERE tenant = ? AND order_id = ?`,
  ).run(key, now, eventId, tenant, orderId);
  hooks.betweenWrites?.();
  const fulfilledAt = new Date(now).toISOString();
  const payload: OrderFulfilledEvent = {
    eventId,
    type: ORDER_FULFILLED,
    tenant,
    orderId,
    customerEmail: row.customer_email,
    fulfilledAt,
    sourceOperationKey: key,
  };
  insertOutboxRow(db, {
    eventId,
    type: ORDER_FULFILLED,
    tenant,
    aggregateId: orderId,
    operationKey: key,
    fence: request.fence,
    payload: { ...payload },
  });
  const receipt = `of_${randomUUID()}`;
  return { receipt, result: { receipt, tenant, orderId, status: 'fulfilled', eventId, fulfilledAt } };
}

function getRow(db: Database, tenant: string, orderId: string): OrderRow | undefined {
  return db
    .prepare('SELECT customer_email, status, fulfilled_by, event_id FROM orders WHERE tenant = ? AND order_id = ?')
    .get(tenant, orderId) as OrderRow | undefined;
}
