/**
 * The inventory's business data: stock per tenant and SKU (on hand, reserved), reservations and their
 * releases. Every mutation runs inside the idempotency store's commit transaction and refuses with a typed
 * `BusinessRejection`. A release names its reservation by the reservation's operation key.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { Id } from '../body-schemas';
import { ForwardOperationKey, refuseMissingForward } from '../compensation';
import { HttpError } from '../http-kit';
import { BusinessRejection, type AppliedEffect } from '../idempotency-store';

/** Stable reasons of the inventory's 422 rejections. */
export const InventoryReason = {
  UnknownSku: 'Inventory.UnknownSku',
  OutOfStock: 'Inventory.OutOfStock',
  UnknownReservation: 'Inventory.UnknownReservation',
  AlreadyReleased: 'Inventory.AlreadyReleased',
} as const;

/** A stock-keeping unit id. */
export const Sku = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a SKU like SKU-1');
const Quantity = z.number().int().min(1).max(1_000_000);

/** Body of `POST /v1/reservations`. */
export const ReserveBody = z.strictObject({ tenant: Id, sku: Sku, quantity: Quantity });
export type ReserveBody = z.infer<typeof ReserveBody>;

/** Body of `POST /v1/releases`: the reservation is named by its operation key (the forward key). */
export const ReleaseBody = z.strictObject({ tenant: Id, reservationOperationKey: ForwardOperationKey });
export type ReleaseBody = z.infer<typeof ReleaseBody>;

/** Body of `POST /admin/stock`: sets the quantity on hand (seeding). */
export const SeedStockBody = z.strictObject({ tenant: Id, sku: Sku, onHand: z.number().int().min(0).max(1e12) });
export type SeedStockBody = z.infer<typeof SeedStockBody>;

/** What `GET /v1/stock/:tenant/:sku` returns. */
export interface StockLevel {
  readonly tenant: string;
  readonly sku: string;
  readonly onHand: number;
  readonly reserved: number;
  readonly available: number;
}

interface StockRow {
  readonly on_hand: number;
  readonly reserved: number;
}

interface ReservationRow {
  readonly receipt: string;
  readonly operation_key: string;
  readonly tenant: string;
  readonly sku: string;
  readonly quantity: number;
  readonly status: 'held' | 'released';
  readonly released_by: string | null;
}

/** Creates the inventory tables if they do not exist. */
export function migrateInventory(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS inventory_stock (
      tenant   TEXT NOT NULL,
      sku      TEXT NOT NULL,
      on_hand  INTEGER NOT NULL CHECK (on_hand >= 0),
      reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0 AND reserved <= on_hand),
      PRIMARY KEY (tenant, sku)
    );
    CREATE TABLE IF NOT EXISTS inventory_reservations (
      receipt       TEXT PRIMARY KEY,
      operation_key TEXT NOT NULL,
      tenant        TEXT NOT NULL,
      sku           TEXT NOT NULL,
      quantity      INTEGER NOT NULL CHECK (quantity > 0),
      status        TEXT NOT NULL CHECK (status IN ('held', 'released')),
      released_by   TEXT,
      created_at    INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS inventory_reservations_key ON inventory_reservations (operation_key);
    CREATE TABLE IF NOT EXISTS inventory_releases (
      receipt             TEXT PRIMARY KEY,
      operation_key       TEXT NOT NULL,
      reservation_receipt TEXT NOT NULL UNIQUE REFERENCES inventory_reservations (receipt),
      quantity            INTEGER NOT NULL CHECK (quantity > 0),
      created_at          INTEGER NOT NULL
    );
  `);
}

/** Sets the quantity on hand (admin seeding); refuses (409) to go below what is reserved. */
export function seedStock(db: Database, seed: SeedStockBody): StockLevel {
  const row = getRow(db, seed.tenant, seed.sku);
  if (row !== undefined && seed.onHand < row.reserved) {
    throw new HttpError(409, DownstreamErrorCode.BadRequest, `${row.reserved} units are reserved`);
  }
  db.prepare(
    `INSERT INTO inventory_stock (tenant, sku, on_hand) VALUES (?, ?, ?)
     ON CONFLICT (tenant, sku) DO UPDATE SET on_hand = excluded.on_hand`,
  ).run(seed.tenant, seed.sku, seed.onHand);
  return getStock(db, seed.tenant, seed.sku) as StockLevel;
}

/** The stock level of a SKU, or undefined when it was never seeded. */
export function getStock(db: Database, tenant: string, sku: string): StockLevel | undefined {
  const row = getRow(db, tenant, sku);
  if (row === undefined) return undefined;
  return { tenant, sku, onHand: row.on_hand, reserved: row.reserved, available: row.on_hand - row.reserved };
}

/** Reserves `quantity` units; rejects an unknown SKU and a quantity above what is available. */
export function applyReserve(db: Database, body: ReserveBody, key: string): AppliedEffect {
  const { tenant, sku, quantity } = body;
  const row = getRow(db, tenant, sku);
  if (row === undefined) throw new BusinessRejection(InventoryReason.UnknownSku, `no stock of ${sku}`);
  const available = row.on_hand - row.reserved;
  if (available < quantity) {
    throw new BusinessRejection(InventoryReason.OutOfStock, `only ${available} of ${sku} available`, { available });
  }
  setReserved(db, tenant, sku, row.reserved + quantity);
  const receipt = `ir_${randomUUID()}`;
  db.prepare(
    `INSERT INTO inventory_reservations (receipt, operation_key, tenant, sku, quantity, status, created_at)
     VALUES (?, ?, ?, ?, ?, 'held', ?)`,
  ).run(receipt, key, tenant, sku, quantity, Date.now());
  return { receipt, result: { receipt, tenant, sku, quantity, availableAfter: available - quantity } };
}

/**
 * Releases the reservation made under `reservationOperationKey`, once: a second release (under another key) is
 * `Inventory.AlreadyReleased`; a key that never reserved anything is `Inventory.UnknownReservation`.
 */
export function applyRelease(db: Database, body: ReleaseBody, key: string): AppliedEffect {
  const { tenant, reservationOperationKey: forwardKey } = body;
  const reservation = db
    .prepare(
      `SELECT receipt, operation_key, tenant, sku, quantity, status, released_by FROM inventory_reservations
       WHERE tenant = ? AND operation_key = ? ORDER BY created_at DESC, rowid DESC`,
    )
    .get(tenant, forwardKey) as ReservationRow | undefined;
  if (reservation === undefined) {
    refuseMissingForward(db, tenant, forwardKey, InventoryReason.UnknownReservation, 'reservation');
  }
  if (reservation.tenant !== tenant) {
    throw new BusinessRejection(InventoryReason.UnknownReservation, `no reservation under ${forwardKey}`);
  }
  if (reservation.status === 'released') {
    throw new BusinessRejection(InventoryReason.AlreadyReleased, `reservation under ${forwardKey} was released`, {
      releasedBy: reservation.released_by,
    });
  }
  const row = getRow(db, tenant, reservation.sku) as StockRow;
  setReserved(db, tenant, reservation.sku, row.reserved - reservation.quantity);
  const receipt = `il_${randomUUID()}`;
  db.prepare(`UPDATE inventory_reservations SET status = 'released', released_by = ? WHERE receipt = ?`).run(
    receipt,
    reservation.receipt,
  );
  db.prepare(
    `INSERT INTO inventory_releases (receipt, operation_key, reservation_receipt, quantity, created_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(receipt, key, reservation.receipt, reservation.quantity, Date.now());
  const result = {
    receipt,
    tenant,
    sku: reservation.sku,
    quantity: reservation.quantity,
    reservationReceipt: reservation.receipt,
    reservationOperationKey: forwardKey,
    availableAfter: row.on_hand - row.reserved + reservation.quantity,
  };
  return { receipt, result };
}

function getRow(db: Database, tenant: string, sku: string): StockRow | undefined {
  return db.prepare('SELECT on_hand, reserved FROM inventory_stock WHERE tenant = ? AND sku = ?').get(tenant, sku) as
    StockRow | undefined;
}

function setReserved(db: Database, tenant: string, sku: string, reserved: number): void {
  db.prepare('UPDATE inventory_stock SET reserved = ? WHERE tenant = ? AND sku = ?').run(reserved, tenant, sku);
}
