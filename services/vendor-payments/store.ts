/**
 * The storage of the vendor payments server: its own SQLite database (WAL, full sync), holding charges, refunds and
 * the idempotency keys, with the clock the server reads (its own time, which the admin listener can move forward to
 * let a key's retention pass). Nothing here is Ledgerloop's: it is what a payment provider keeps.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';

export interface ChargeRow {
  readonly id: string;
  readonly object: 'charge';
  readonly customer: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: 'succeeded' | 'failed';
  readonly amount_refunded: number;
  readonly metadata: Record<string, string>;
  readonly created: number;
}

export interface RefundRow {
  readonly id: string;
  readonly object: 'refund';
  readonly charge: string;
  readonly amount: number;
  readonly status: 'succeeded';
  readonly metadata: Record<string, string>;
  readonly created: number;
}

/** A saved idempotency key: the request's parameters (hashed) and, once execution began and ended, its response. */
export interface KeyRow {
  readonly key: string;
  readonly path: string;
  readonly paramsHash: string;
  readonly status: 'in_progress' | 'done';
  readonly responseStatus: number | null;
  readonly responseBody: string | null;
  readonly createdAt: number;
}

export class VendorStore {
  readonly db: Database;
  /** How far the server's clock is ahead of the machine's (the admin listener moves it). */
  private offsetMs = 0;

  constructor(dbPath: string) {
    this.db = new BetterSqlite3(dbPath);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS charges (
        id TEXT PRIMARY KEY, customer TEXT NOT NULL, amount INTEGER NOT NULL, currency TEXT NOT NULL,
        status TEXT NOT NULL, amount_refunded INTEGER NOT NULL DEFAULT 0, metadata TEXT NOT NULL, created INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS refunds (
        id TEXT PRIMARY KEY, charge TEXT NOT NULL, amount INTEGER NOT NULL, status TEXT NOT NULL,
        metadata TEXT NOT NULL, created INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS idempotency_keys (
        key TEXT PRIMARY KEY, path TEXT NOT NULL, params_hash TEXT NOT NULL, status TEXT NOT NULL,
        response_status INTEGER, response_body TEXT, created_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
    // A request that began executing and never finished (the process died): its key is released, as nothing of it
    // was committed (the effect and the saved response commit in one transaction).
    this.db.prepare(`DELETE FROM idempotency_keys WHERE status = 'in_progress'`).run();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advanceClock(ms: number): number {
    this.offsetMs += ms;
    return this.now();
  }

  /** The next id of a kind (`ch`, `re`), from a counter in the database (stable across restarts). */
  nextId(prefix: 'ch' | 're'): string {
    const row = this.db
      .prepare(
        `INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value`,
      )
      .get(prefix) as { value: number };
    return `${prefix}_${String(row.value).padStart(6, '0')}`;
  }

  count(name: string): number {
    return (
      (this.db.prepare(`SELECT value FROM counters WHERE name = ?`).get(name) as { value: number } | undefined)
        ?.value ?? 0
    );
  }

  bump(name: string): void {
    this.db
      .prepare(`INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1`)
      .run(name);
  }

  /** Prune keys older than `retentionMs` (Stripe: at least 24 h): a reused key after that is a new request. */
  prune(retentionMs: number): void {
    this.db
      .prepare(`DELETE FROM idempotency_keys WHERE status = 'done' AND created_at < ?`)
      .run(this.now() - retentionMs);
  }

  key(key: string): KeyRow | undefined {
    const r = this.db.prepare(`SELECT * FROM idempotency_keys WHERE key = ?`).get(key) as
      | {
          key: string;
          path: string;
          params_hash: string;
          status: 'in_progress' | 'done';
          response_status: number | null;
          response_body: string | null;
          created_at: number;
        }
      | undefined;
    return r === undefined
      ? undefined
      : {
          key: r.key,
          path: r.path,
          paramsHash: r.params_hash,
          status: r.status,
          responseStatus: r.response_status,
          responseBody: r.response_body,
          createdAt: r.created_at,
        };
  }

  beginKey(key: string, path: string, paramsHash: string): void {
    this.db
      .prepare(
        `INSERT INTO idempotency_keys (key, path, params_hash, status, created_at) VALUES (?, ?, ?, 'in_progress', ?)`,
      )
      .run(key, path, paramsHash, this.now());
  }

  releaseKey(key: string): void {
    this.db.prepare(`DELETE FROM idempotency_keys WHERE key = ? AND status = 'in_progress'`).run(key);
  }

  saveResponse(key: string, status: number, body: unknown): void {
    this.db
      .prepare(`UPDATE idempotency_keys SET status = 'done', response_status = ?, response_body = ? WHERE key = ?`)
      .run(status, JSON.stringify(body), key);
  }

  insertCharge(c: ChargeRow): void {
    this.db
      .prepare(
        `INSERT INTO charges (id, customer, amount, currency, status, amount_refunded, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(c.id, c.customer, c.amount, c.currency, c.status, c.amount_refunded, JSON.stringify(c.metadata), c.created);
  }

  insertRefund(r: RefundRow): void {
    this.db
      .prepare(`INSERT INTO refunds (id, charge, amount, status, metadata, created) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(r.id, r.charge, r.amount, r.status, JSON.stringify(r.metadata), r.created);
    this.db.prepare(`UPDATE charges SET amount_refunded = amount_refunded + ? WHERE id = ?`).run(r.amount, r.charge);
  }

  charge(id: string): ChargeRow | undefined {
    const r = this.db.prepare(`SELECT * FROM charges WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return r === undefined ? undefined : chargeOf(r);
  }

  /** Charges or refunds whose metadata `field` is `value`, created at least `lagMs` ago (search lags writes). */
  search(kind: 'charges' | 'refunds', field: string, value: string, lagMs: number): Array<ChargeRow | RefundRow> {
    const rows = this.db
      .prepare(`SELECT * FROM ${kind} WHERE json_extract(metadata, ?) = ? AND created <= ? ORDER BY created`)
      .all(`$."${field.replace(/"/g, '')}"`, value, this.now() - lagMs) as Record<string, unknown>[];
    return kind === 'charges' ? rows.map(chargeOf) : rows.map(refundOf);
  }

  close(): void {
    this.db.close();
  }
}

function chargeOf(r: Record<string, unknown>): ChargeRow {
  return {
    id: String(r['id']),
    object: 'charge',
    customer: String(r['customer']),
    amount: Number(r['amount']),
    currency: String(r['currency']),
    status: r['status'] === 'failed' ? 'failed' : 'succeeded',
    amount_refunded: Number(r['amount_refunded']),
    metadata: JSON.parse(String(r['metadata'])) as Record<string, string>,
    created: Number(r['created']),
  };
}

function refundOf(r: Record<string, unknown>): RefundRow {
  return {
    id: String(r['id']),
    object: 'refund',
    charge: String(r['charge']),
    amount: Number(r['amount']),
    status: 'succeeded',
    metadata: JSON.parse(String(r['metadata'])) as Record<string, string>,
    created: Number(r['created']),
  };
}
