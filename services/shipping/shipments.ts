/**
 * The shipping service's business data: shipments per tenant and order, the served countries and a capacity
 * counter. Scheduling can fail for business reasons (a country not served, no capacity left, an order already
 * scheduled); a cancellation names its shipment by the shipment's operation key and fails once the parcel was
 * handed to the carrier: a compensation that can fail.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { Id } from '../body-schemas';
import { ForwardOperationKey, refuseMissingForward } from '../compensation';
import { HttpError } from '../http-kit';
import { BusinessRejection, type AppliedEffect } from '../idempotency-store';

/** Stable reasons of the shipping service's 422 rejections. */
export const ShippingReason = {
  Unserviceable: 'Shipping.Unserviceable',
  NoCapacity: 'Shipping.NoCapacity',
  AlreadyScheduled: 'Shipping.AlreadyScheduled',
  UnknownShipment: 'Shipping.UnknownShipment',
  AlreadyCancelled: 'Shipping.AlreadyCancelled',
  AlreadyDispatched: 'Shipping.AlreadyDispatched',
} as const;

/** ISO 3166-1 alpha-2 countries the carrier serves; anything else is `Shipping.Unserviceable`. */
export const SERVED_COUNTRIES: readonly string[] = ['AT', 'BE', 'CH', 'DE', 'DK', 'ES', 'FR', 'GB', 'IT', 'NL', 'PL'];

/** A postal address as the service takes it (canonical: upper-case country and postal code). */
export const Address = z.strictObject({
  country: z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code such as DE'),
  postalCode: z.string().regex(/^[A-Z0-9][A-Z0-9 -]{0,15}$/, 'an upper-case postal code'),
  line1: z.string().min(1).max(200),
});

/** Body of `POST /v1/shipments`. */
export const ScheduleBody = z.strictObject({ tenant: Id, orderId: Id, address: Address });
export type ScheduleBody = z.infer<typeof ScheduleBody>;

/** Body of `POST /v1/cancellations`: the shipment is named by its operation key (the forward key). */
export const CancelBody = z.strictObject({ tenant: Id, shipmentOperationKey: ForwardOperationKey });
export type CancelBody = z.infer<typeof CancelBody>;

/** Body of `POST /admin/capacity`: how many more shipments are accepted; null for no limit. */
export const CapacityBody = z.strictObject({ remaining: z.number().int().min(0).max(1e9).nullable() });
export type CapacityBody = z.infer<typeof CapacityBody>;

/** Body of `POST /admin/dispatch`: hand a scheduled shipment to the carrier (it can no longer be cancelled). */
export const DispatchBody = z.strictObject({ tenant: Id, shipmentOperationKey: ForwardOperationKey });
export type DispatchBody = z.infer<typeof DispatchBody>;

/** One shipment as `GET /v1/shipments/:tenant/:orderId` lists it. */
export interface Shipment {
  readonly receipt: string;
  readonly operationKey: string;
  readonly tenant: string;
  readonly orderId: string;
  readonly country: string;
  readonly status: 'scheduled' | 'dispatched' | 'cancelled';
}

interface ShipmentRow {
  readonly receipt: string;
  readonly operation_key: string;
  readonly tenant: string;
  readonly order_id: string;
  readonly country: string;
  readonly status: Shipment['status'];
}

const SHIPMENT_COLUMNS = 'receipt, operation_key, tenant, order_id, country, status';

/** Creates the shipping tables if they do not exist. */
export function migrateShipping(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS shipping_capacity (
      id        INTEGER PRIMARY KEY CHECK (id = 1),
      remaining INTEGER CHECK (remaining IS NULL OR remaining >= 0)
    );
    INSERT OR IGNORE INTO shipping_capacity (id, remaining) VALUES (1, NULL);
    CREATE TABLE IF NOT EXISTS shipping_shipments (
      receipt       TEXT PRIMARY KEY,
      operation_key TEXT NOT NULL,
      tenant        TEXT NOT NULL,
      order_id      TEXT NOT NULL,
      country       TEXT NOT NULL,
      postal_code   TEXT NOT NULL,
      line1         TEXT NOT NULL,
      status        TEXT NOT NULL CHECK (status IN ('scheduled', 'dispatched', 'cancelled')),
      cancelled_by  TEXT,
      created_at    INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS shipping_shipments_key ON shipping_shipments (operation_key);
    CREATE INDEX IF NOT EXISTS shipping_shipments_order ON shipping_shipments (tenant, order_id);
  `);
}

/** Sets the remaining capacity (admin): 0 refuses every new shipment with `Shipping.NoCapacity`. */
export function setCapacity(db: Database, body: CapacityBody): CapacityBody {
  db.prepare('UPDATE shipping_capacity SET remaining = ? WHERE id = 1').run(body.remaining);
  return getCapacity(db);
}

/** The remaining capacity (null: no limit). */
export function getCapacity(db: Database): CapacityBody {
  const row = db.prepare('SELECT remaining FROM shipping_capacity WHERE id = 1').get() as CapacityBody;
  return { remaining: row.remaining };
}

/** The shipments of an order, oldest first. */
export function listShipments(db: Database, tenant: string, orderId: string): Shipment[] {
  const rows = db
    .prepare(`SELECT ${SHIPMENT_COLUMNS} FROM shipping_shipments WHERE tenant = ? AND order_id = ? ORDER BY rowid`)
    .all(tenant, orderId) as ShipmentRow[];
  return rows.map(toShipment);
}

/** Schedules a shipment; rejects unserved countries, exhausted capacity and an order already scheduled. */
export function applySchedule(db: Database, body: ScheduleBody, key: string): AppliedEffect {
  const { tenant, orderId, address } = body;
  if (!SERVED_COUNTRIES.includes(address.country)) {
    throw new BusinessRejection(ShippingReason.Unserviceable, `country ${address.country} is not served`);
  }
  const { remaining } = getCapacity(db);
  if (remaining === 0) throw new BusinessRejection(ShippingReason.NoCapacity, 'no shipping capacity left');
  const active = db
    .prepare(`SELECT receipt FROM shipping_shipments WHERE tenant = ? AND order_id = ? AND status != 'cancelled'`)
    .get(tenant, orderId) as { receipt: string } | undefined;
  if (active !== undefined) {
    throw new BusinessRejection(ShippingReason.AlreadyScheduled, `order ${orderId} already has a shipment`, {
      shipment: active.receipt,
    });
  }
  if (remaining !== null) db.prepare('UPDATE shipping_capacity SET remaining = ? WHERE id = 1').run(remaining - 1);
  const receipt = `sh_${randomUUID()}`;
  db.prepare(
    `INSERT INTO shipping_shipments
       (receipt, operation_key, tenant, order_id, country, postal_code, line1, status, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'scheduled', ?)`,
  ).run(receipt, key, tenant, orderId, address.country, address.postalCode, address.line1, Date.now());
  const result = { receipt, tenant, orderId, status: 'scheduled', country: address.country };
  return { receipt, result };
}

/** Cancels the shipment scheduled under `shipmentOperationKey`, unless it was cancelled or dispatched. */
export function applyCancel(db: Database, body: CancelBody, key: string): AppliedEffect {
  const shipment = requireShipment(db, body.tenant, body.shipmentOperationKey);
  if (shipment.status === 'cancelled') {
    throw new BusinessRejection(ShippingReason.AlreadyCancelled, `shipment ${shipment.receipt} is cancelled`);
  }
  if (shipment.status === 'dispatched') {
    throw new BusinessRejection(ShippingReason.AlreadyDispatched, `shipment ${shipment.receipt} left the warehouse`);
  }
  const receipt = `sc_${randomUUID()}`;
  db.prepare(`UPDATE shipping_shipments SET status = 'cancelled', cancelled_by = ? WHERE receipt = ?`).run(
    key,
    shipment.receipt,
  );
  const result = {
    receipt,
    tenant: body.tenant,
    orderId: shipment.order_id,
    status: 'cancelled',
    shipmentReceipt: shipment.receipt,
    shipmentOperationKey: body.shipmentOperationKey,
  };
  return { receipt, result };
}

/** Marks a scheduled shipment dispatched (admin); 404 for an unknown one, 409 unless it is scheduled. */
export function dispatchShipment(db: Database, body: DispatchBody): Shipment {
  const row = findShipment(db, body.shipmentOperationKey);
  if (row === undefined || row.tenant !== body.tenant) {
    throw new HttpError(404, DownstreamErrorCode.NotFound, `no shipment under ${body.shipmentOperationKey}`);
  }
  if (row.status !== 'scheduled') throw new HttpError(409, DownstreamErrorCode.BadRequest, `shipment is ${row.status}`);
  db.prepare(`UPDATE shipping_shipments SET status = 'dispatched' WHERE receipt = ?`).run(row.receipt);
  return { ...toShipment(row), status: 'dispatched' };
}

function requireShipment(db: Database, tenant: string, forwardKey: string): ShipmentRow {
  const row = findShipment(db, forwardKey);
  if (row === undefined) refuseMissingForward(db, tenant, forwardKey, ShippingReason.UnknownShipment, 'shipment');
  if (row.tenant !== tenant) {
    throw new BusinessRejection(ShippingReason.UnknownShipment, `no shipment under ${forwardKey}`);
  }
  return row;
}

function findShipment(db: Database, forwardKey: string): ShipmentRow | undefined {
  return db
    .prepare(
      `SELECT ${SHIPMENT_COLUMNS} FROM shipping_shipments WHERE operation_key = ? ORDER BY created_at DESC, rowid DESC`,
    )
    .get(forwardKey) as ShipmentRow | undefined;
}

function toShipment(row: ShipmentRow): Shipment {
  return {
    receipt: row.receipt,
    operationKey: row.operation_key,
    tenant: row.tenant,
    orderId: row.order_id,
    country: row.country,
    status: row.status,
  };
}
