/**
 * The fenced local outbox's table in an SQLite file (better-sqlite3, the SQLite the services kit uses), for a team
 * whose own state is SQLite, or one worker host: the same rows and the same claim rule as the PostgreSQL store
 * (outbox-store.ts), the claim in ONE `BEGIN IMMEDIATE` transaction, which takes the file's write lock before it
 * reads the row, so a concurrent claim (another connection, another process on the same file) waits for it and
 * then sees the fence it wrote.
 *
 *   const outbox = new SqliteOutbox({ file: '/var/lib/team/outbox.db' });   // or { database } (a better-sqlite3 one)
 *   outbox.createTable();                                                     // once
 *   await outbox.verify();                                                    // the worker does this at start
 *
 * better-sqlite3 is synchronous: each call holds the worker's event loop for one short transaction on a local file.
 */
import type { Database } from 'better-sqlite3';
import { ToolDeclarationError } from '../../domain/tool-check';
import {
  checkColumns,
  checkedTable,
  claimDecision,
  outboxTableDdl,
  OUTBOX_TABLE,
  SETTLED,
  toRow,
  type ClaimResult,
  type OutboxIntent,
  type OutboxRecord,
  type OutboxRow,
  type OutboxStore,
  type RawOutboxRow,
} from './outbox-store';

/** The table's DDL in SQLite's dialect (the same columns as `outboxDdl`'s). */
export function sqliteOutboxDdl(table: string = OUTBOX_TABLE): string {
  return outboxTableDdl('sqlite', table);
}

export interface SqliteOutboxOptions {
  /** The SQLite file, opened here (WAL, `busy_timeout` 5 s, as the services open theirs). Give this or `database`. */
  readonly file?: string;
  /** An open better-sqlite3 database instead of `file` (its pragmas are the caller's). */
  readonly database?: Database;
  /** The table's name (lowercase letters, digits, `_`). Default `ledgerloop_outbox`. */
  readonly table?: string;
  /** Injectable clock (epoch ms), for tests. Default `Date.now`. */
  readonly now?: () => number;
}

const COLUMNS = `tenant, operation_key, tool, arguments_hash, body_json, intent_at, fence, status, sends, outcome_json,
  receipt`;

/** The outbox table of one SQLite file. */
export class SqliteOutbox implements OutboxStore {
  readonly table: string;
  private readonly db: Database;
  private readonly now: () => number;

  constructor(options: SqliteOutboxOptions) {
    const given = [options?.file, options?.database].filter((v) => v !== undefined).length;
    if (given !== 1)
      throw new ToolDeclarationError(['outbox: give the SQLite outbox exactly one of file and database']);
    this.table = checkedTable(options.table ?? OUTBOX_TABLE);
    this.now = options.now ?? Date.now;
    this.db = options.database ?? openFile(options.file!);
  }

  /** Creates the table if it does not exist. */
  createTable(): void {
    this.db.exec(sqliteOutboxDdl(this.table));
  }

  /** Refuses (`ToolDeclarationError`) unless the table exists with every column the outbox writes. */
  verify(): Promise<void> {
    let columns: Set<string>;
    try {
      const found = this.db.prepare(`SELECT name FROM pragma_table_info(?)`).all(this.table) as { name: string }[];
      columns = new Set(found.map((r) => r.name));
    } catch (err) {
      return Promise.reject(
        new ToolDeclarationError([
          `outbox: the SQLite file could not be read (${String((err as Error).message).slice(0, 160)})`,
        ]),
      );
    }
    try {
      checkColumns(this.table, columns, 'createTable() or sqliteOutboxDdl()');
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return Promise.resolve();
  }

  /** The claim of outbox-store.ts's rule in one `BEGIN IMMEDIATE` transaction (see the file's comment). */
  claim(intent: OutboxIntent): Promise<ClaimResult> {
    return this.run(() => this.db.transaction(() => this.claimInside(intent)).immediate());
  }

  record(tenant: string, key: string, fence: number, r: OutboxRecord): Promise<void> {
    const settled = SETTLED.includes(r.status) ? 1 : 0;
    return this.run(() => {
      this.db
        .prepare(
          `UPDATE ${this.table} SET status = ?, outcome_json = ?, receipt = ?
           WHERE tenant = ? AND operation_key = ? AND status NOT IN ('answered', 'rejected') AND (? OR fence = ?)`,
        )
        .run(r.status, JSON.stringify(r.outcome ?? null), r.receipt ?? null, tenant, key, settled, fence);
    });
  }

  read(tenant: string, key: string): Promise<OutboxRow | undefined> {
    return this.run(() => this.select(tenant, key));
  }

  /** Closes the file when this store opened it. */
  close(): void {
    if (this.db.open) this.db.close();
  }

  private claimInside(intent: OutboxIntent): ClaimResult {
    const now = this.now();
    this.db
      .prepare(
        `INSERT INTO ${this.table} (tenant, operation_key, tool, arguments_hash, body_json, intent_at, fence, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        intent.tenant,
        intent.key,
        intent.tool,
        intent.argumentsHash,
        JSON.stringify(intent.body),
        intent.intentAt,
        intent.fence,
        now,
      );
    const row = this.select(intent.tenant, intent.key);
    if (row === undefined) throw new Error(`outbox row ${intent.key} vanished inside its transaction`);
    const decision = claimDecision(row, intent);
    if (decision.kind === 'mismatch') return { kind: 'mismatch' };
    if (decision.kind === 'stale') return { kind: 'stale', rowFence: row.fence };
    if (decision.kind === 'settled') {
      if (decision.raise)
        this.db
          .prepare(`UPDATE ${this.table} SET fence = ? WHERE tenant = ? AND operation_key = ?`)
          .run(intent.fence, intent.tenant, intent.key);
      return { kind: 'settled', row: { ...row, fence: Math.max(row.fence, intent.fence) } };
    }
    const claimed = this.db
      .prepare(
        `UPDATE ${this.table} SET fence = ?, status = 'sending', sends = sends + 1,
           first_sent_at = COALESCE(first_sent_at, ?), last_sent_at = ?
         WHERE tenant = ? AND operation_key = ? RETURNING ${COLUMNS}`,
      )
      .get(intent.fence, now, now, intent.tenant, intent.key) as RawOutboxRow;
    return { kind: 'claimed', row: toRow(claimed) };
  }

  private select(tenant: string, key: string): OutboxRow | undefined {
    const found = this.db
      .prepare(`SELECT ${COLUMNS} FROM ${this.table} WHERE tenant = ? AND operation_key = ?`)
      .get(tenant, key) as RawOutboxRow | undefined;
    return found === undefined ? undefined : toRow(found);
  }

  /** A synchronous call as the store's promise: what it throws is a rejection, as the PostgreSQL store's is. */
  private run<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
}

/** Opens `file` as the services open theirs; better-sqlite3 (native) is loaded only for a worker that uses it. */
function openFile(file: string): Database {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for an SQLite outbox
  const BetterSqlite3 = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  return db;
}
