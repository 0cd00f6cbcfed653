/**
 * The orders service's transactional outbox: a message intent written in the same SQLite transaction as the
 * business change it announces, published later by the relay (`relay.ts`), acknowledged once delivered.
 *
 * Each row carries a deterministic event id (consumers deduplicate by it) and the fence of the request that
 * wrote it (the relay publishes with it, so a consumer can refuse a stale owner's delivery). Every publish
 * attempt is logged before it is sent: a relay that crashes after publishing and before acknowledging leaves
 * an attempt without an outcome and a row still pending, which the next relay publishes again.
 */
import type { Database } from 'better-sqlite3';
import { hashCanonical } from '../../src/domain/canonical';
import { writeTransaction } from '../sqlite-write';

/** What a relay does with an outbox row after a publish attempt. */
export type DeliveryDecision = 'acknowledge' | 'retry' | 'dead_letter';

/** One outbox row as the relay reads it. */
export interface OutboxRow {
  readonly id: number;
  readonly eventId: string;
  readonly type: string;
  readonly fence: number;
  readonly payload: Record<string, unknown>;
  /** When the row was written (epoch ms): the intent time of its delivery (`X-Intent-At`). */
  readonly createdAt: number;
}

/** Per-event delivery evidence. */
export interface OutboxEventStats {
  readonly eventId: string;
  readonly type: string;
  readonly tenant: string;
  readonly aggregateId: string;
  readonly operationKey: string;
  readonly fence: number;
  readonly status: 'pending' | 'acknowledged' | 'dead';
  readonly attempts: number;
  readonly lastError: string | null;
}

/** What `GET /admin/outbox` (orders) and `GET /admin/relay` (relay) return, counted from the database. */
export interface OutboxStats {
  readonly rows: number;
  readonly pending: number;
  readonly acknowledged: number;
  readonly dead: number;
  /** Publish attempts started (one per send, including those whose outcome a crash lost). */
  readonly publishAttempts: number;
  /** Attempts whose outcome was never recorded: the relay died after sending. */
  readonly unrecordedAttempts: number;
  /** The most recent events (at most 100), newest first. */
  readonly events: readonly OutboxEventStats[];
}

/** Creates the outbox tables if they do not exist. */
export function migrateOutbox(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS orders_outbox (
      id              INTEGER PRIMARY KEY AUTOINCREMENT,
      event_id        TEXT NOT NULL UNIQUE,
      type            TEXT NOT NULL,
      tenant          TEXT NOT NULL,
      aggregate_id    TEXT NOT NULL,
      operation_key   TEXT NOT NULL,
      fence           INTEGER NOT NULL,
      payload_json    TEXT NOT NULL,
      status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'acknowledged', 'dead')),
      created_at      INTEGER NOT NULL,
      acknowledged_at INTEGER,
      last_error      TEXT
    );
    CREATE INDEX IF NOT EXISTS orders_outbox_status ON orders_outbox (status, id);
    CREATE TABLE IF NOT EXISTS orders_outbox_attempts (
      id          INTEGER PRIMARY KEY AUTOINCREMENT,
      event_id    TEXT NOT NULL,
      fence       INTEGER NOT NULL,
      started_at  INTEGER NOT NULL,
      finished_at INTEGER,
      outcome     TEXT
    );
    CREATE INDEX IF NOT EXISTS orders_outbox_attempts_event ON orders_outbox_attempts (event_id);
  `);
}

/** The deterministic event id of a message: `evt_` + 40 hex of SHA-256 over type, tenant, aggregate and key. */
export function deriveEventId(type: string, tenant: string, aggregateId: string, operationKey: string): string {
  return `evt_${hashCanonical({ type, tenant, aggregateId, operationKey }).slice(0, 40)}`;
}

/** Writes a message intent; call it inside the transaction of the business change it announces. */
export function insertOutboxRow(
  db: Database,
  row: {
    readonly eventId: string;
    readonly type: string;
    readonly tenant: string;
    readonly aggregateId: string;
    readonly operationKey: string;
    readonly fence: number;
    readonly payload: Record<string, unknown>;
  },
): void {
  db.prepare(
    `INSERT INTO orders_outbox (event_id, type, tenant, aggregate_id, operation_key, fence, payload_json, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.eventId,
    row.type,
    row.tenant,
    row.aggregateId,
    row.operationKey,
    row.fence,
    JSON.stringify(row.payload),
    Date.now(),
  );
}

/** The oldest pending rows, in write order. */
export function pendingRows(db: Database, limit: number): OutboxRow[] {
  const rows = db
    .prepare(
      `SELECT id, event_id, type, fence, payload_json, created_at FROM orders_outbox
       WHERE status = 'pending' ORDER BY id LIMIT ?`,
    )
    .all(limit) as {
    id: number;
    event_id: string;
    type: string;
    fence: number;
    payload_json: string;
    created_at: number;
  }[];
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    type: r.type,
    fence: r.fence,
    payload: JSON.parse(r.payload_json) as Record<string, unknown>,
    createdAt: r.created_at,
  }));
}

/** Logs a publish attempt before it is sent; returns its id. */
export function startAttempt(db: Database, row: OutboxRow): number {
  const info = db
    .prepare('INSERT INTO orders_outbox_attempts (event_id, fence, started_at) VALUES (?, ?, ?)')
    .run(row.eventId, row.fence, Date.now());
  return Number(info.lastInsertRowid);
}

/**
 * Records an attempt's outcome and applies the decision to its row, in one transaction that takes the write lock
 * when it begins: the orders service writes the same file (writeTransaction).
 */
export function finishAttempt(
  db: Database,
  attemptId: number,
  row: OutboxRow,
  decision: DeliveryDecision,
  outcome: string,
): void {
  writeTransaction(db, () => {
    const now = Date.now();
    db.prepare('UPDATE orders_outbox_attempts SET finished_at = ?, outcome = ? WHERE id = ?').run(
      now,
      outcome,
      attemptId,
    );
    if (decision === 'acknowledge') {
      db.prepare(
        `UPDATE orders_outbox SET status = 'acknowledged', acknowledged_at = ? WHERE id = ? AND status = 'pending'`,
      ).run(now, row.id);
    } else if (decision === 'dead_letter') {
      db.prepare(`UPDATE orders_outbox SET status = 'dead', last_error = ? WHERE id = ? AND status = 'pending'`).run(
        outcome,
        row.id,
      );
    } else {
      db.prepare('UPDATE orders_outbox SET last_error = ? WHERE id = ?').run(outcome, row.id);
    }
  });
}

/** Outbox and relay evidence, counted from the database. */
export function outboxStats(db: Database): OutboxStats {
  const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
  const events = db
    .prepare(
      `SELECT o.event_id, o.type, o.tenant, o.aggregate_id, o.operation_key, o.fence, o.status, o.last_error,
              (SELECT count(*) FROM orders_outbox_attempts a WHERE a.event_id = o.event_id) AS attempts
       FROM orders_outbox o ORDER BY o.id DESC LIMIT 100`,
    )
    .all() as {
    event_id: string;
    type: string;
    tenant: string;
    aggregate_id: string;
    operation_key: string;
    fence: number;
    status: OutboxEventStats['status'];
    last_error: string | null;
    attempts: number;
  }[];
  return {
    rows: count('SELECT count(*) AS n FROM orders_outbox'),
    pending: count(`SELECT count(*) AS n FROM orders_outbox WHERE status = 'pending'`),
    acknowledged: count(`SELECT count(*) AS n FROM orders_outbox WHERE status = 'acknowledged'`),
    dead: count(`SELECT count(*) AS n FROM orders_outbox WHERE status = 'dead'`),
    publishAttempts: count('SELECT count(*) AS n FROM orders_outbox_attempts'),
    unrecordedAttempts: count('SELECT count(*) AS n FROM orders_outbox_attempts WHERE outcome IS NULL'),
    events: events.map((e) => ({
      eventId: e.event_id,
      type: e.type,
      tenant: e.tenant,
      aggregateId: e.aggregate_id,
      operationKey: e.operation_key,
      fence: e.fence,
      status: e.status,
      attempts: e.attempts,
      lastError: e.last_error,
    })),
  };
}
