/**
 * The quota store on SQLite (better-sqlite3, WAL): one file shared by the worker processes of one host, which is
 * also the one clock they share. Each reservation is one `BEGIN IMMEDIATE` transaction (as services/sqlite-write.ts
 * writes, which the runtime may not import): it takes the file's write lock before it reads, so concurrent workers
 * wait their turn (busy timeout 5 s) instead of failing with SQLITE_BUSY.
 * The file is opened on first use; a file that cannot be opened or written refuses (QuotaStoreUnavailable), and
 * the next reservation tries again.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { QuotaStoreUnavailable, type QuotaBackend } from './quota-store';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS ledgerloop_quota (
    tenant TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
  );
`;

/** The time on the host that holds the file, in whole milliseconds since the epoch. */
const NOW_MS = `SELECT CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) AS now_ms`;

/** The open file and its three statements, prepared once (preparing them in every transaction cost as much again). */
interface Opened {
  readonly db: Database.Database;
  readonly read: Database.Statement<[string], { state: string }>;
  readonly now: Database.Statement<[], { now_ms: number }>;
  readonly write: Database.Statement<[string, string, number]>;
}

export class SqliteQuotaBackend implements QuotaBackend {
  readonly kind = 'sqlite';
  private opened: Opened | undefined;

  /** `file`: the database file (created with its folder when missing), or `:memory:` for one process. */
  constructor(readonly file: string) {}

  private open(): Opened {
    if (this.opened) return this.opened;
    try {
      if (this.file !== ':memory:') mkdirSync(path.dirname(this.file), { recursive: true });
      const db = new Database(this.file);
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('busy_timeout = 5000');
        db.exec(SCHEMA);
        this.opened = {
          db,
          read: db.prepare('SELECT state FROM ledgerloop_quota WHERE tenant = ?'),
          now: db.prepare(NOW_MS),
          write: db.prepare(
            `INSERT INTO ledgerloop_quota (tenant, state, updated_ms) VALUES (?, ?, ?)
             ON CONFLICT (tenant) DO UPDATE SET state = excluded.state, updated_ms = excluded.updated_ms`,
          ),
        };
      } catch (err) {
        db.close();
        throw err;
      }
      return this.opened;
    } catch (err) {
      throw new QuotaStoreUnavailable(`the quota database cannot be opened: ${(err as Error).message}`);
    }
  }

  async withTenant<T>(
    tenant: string,
    step: (stored: string | undefined, nowMs: number) => { readonly result: T; readonly next?: string },
  ): Promise<T> {
    const { db, read, now: clock, write } = this.open();
    try {
      return db
        .transaction(() => {
          const row = read.get(tenant);
          const now = clock.get()!.now_ms;
          const { result, next } = step(row?.state, now);
          if (next !== undefined) write.run(tenant, next, now);
          return result;
        })
        .immediate();
    } catch (err) {
      if (err instanceof QuotaStoreUnavailable) throw err;
      throw new QuotaStoreUnavailable(`the quota database did not answer: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.opened?.db.close();
    this.opened = undefined;
  }
}
