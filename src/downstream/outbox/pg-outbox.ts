/**
 * The fenced local outbox's table in the team's own PostgreSQL (the rows and the claim rule: outbox-store.ts). It is
 * for a downstream that takes no fence (a vendor HTTP API, an SDK): the fence is checked here instead, in the same
 * transaction that claims the row for a send (`SELECT ... FOR UPDATE`), so a worker that a newer attempt fenced out
 * can no longer cause one.
 *
 *   const outbox = new PgOutbox({ pool });       // the team's `pg` Pool
 *   await outbox.createTable();                  // once, e.g. in the team's migrations (or its DDL, `outboxDdl`)
 *   await outbox.verify();                       // the worker does this at start: a missing table refuses it
 */
import type { Pool, PoolClient } from 'pg';
import { ToolDeclarationError } from '../../domain/tool-check';
import {
  checkColumns,
  checkedTable,
  claimDecision,
  outboxTableDdl,
  OUTBOX_TABLE,
  toRow,
  type ClaimResult,
  type OutboxIntent,
  type OutboxRecord,
  type OutboxRow,
  type OutboxStore,
  type RawOutboxRow,
  SETTLED,
} from './outbox-store';

export {
  OUTBOX_TABLE,
  type ClaimResult,
  type OutboxIntent,
  type OutboxRecord,
  type OutboxRow,
  type OutboxStatus,
} from './outbox-store';

/** The table's DDL, for a team that keeps its own migrations. */
export function outboxDdl(table: string = OUTBOX_TABLE): string {
  return outboxTableDdl('postgres', table);
}

export interface PgOutboxOptions {
  /** The team's `pg` Pool (its own database): required. */
  readonly pool: Pool;
  /** The table's name (lowercase letters, digits, `_`). Default `ledgerloop_outbox`. */
  readonly table?: string;
  /** Injectable clock (epoch ms), for tests. Default `Date.now`. */
  readonly now?: () => number;
}

// BIGINT comes back from `pg` as a string: the fence is read as float8 (exact up to 2^53, and fences stay below).
const COLUMNS = `tenant, operation_key, tool, arguments_hash, body_json, intent_at, fence::float8 AS fence, status,
  sends, outcome_json, receipt`;

/** The outbox table of one database. */
export class PgOutbox implements OutboxStore {
  readonly table: string;
  private readonly pool: Pool;
  private readonly now: () => number;

  constructor(options: PgOutboxOptions) {
    const pool = (options as { pool?: unknown } | undefined)?.pool;
    if (pool === undefined || pool === null || typeof (pool as Pool).connect !== 'function')
      throw new ToolDeclarationError(['outbox: no pg Pool is given (options.pool)']);
    this.pool = options.pool;
    this.table = checkedTable(options.table ?? OUTBOX_TABLE);
    this.now = options.now ?? Date.now;
  }

  /** Creates the table if it does not exist. */
  async createTable(): Promise<void> {
    await this.pool.query(outboxDdl(this.table));
  }

  /**
   * Refuses (`ToolDeclarationError`) unless the table exists with every column the outbox writes: the worker calls
   * it before it polls, so a missing table refuses the start instead of the first send.
   */
  async verify(): Promise<void> {
    let columns: Set<string>;
    try {
      const found = await this.pool.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
        [this.table],
      );
      columns = new Set(found.rows.map((r) => r.column_name));
    } catch (err) {
      // The SQLSTATE and the server's first line, never the URL (which may hold a password).
      const e = err as { code?: unknown; message?: unknown };
      const why = [
        e.code,
        String(e.message ?? '')
          .split('\n')[0]
          ?.slice(0, 160),
      ]
        .filter(Boolean)
        .join(' ');
      throw new ToolDeclarationError([`outbox: the database could not be read (${why})`]);
    }
    checkColumns(this.table, columns, 'createTable() or outboxDdl()');
  }

  /**
   * Writes the intent (or finds its row) and claims it for a send by `intent.fence`, in ONE transaction: the row is
   * locked, a lower fence than the row's is refused (`stale`), a key written for other arguments is refused
   * (`mismatch`), a row holding the downstream's answer is `settled`; otherwise the row takes this fence, counts a
   * send and is `sending` when the transaction commits. A concurrent claim under the key waits on the row lock.
   */
  async claim(intent: OutboxIntent): Promise<ClaimResult> {
    const now = this.now();
    return this.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO ${this.table} (tenant, operation_key, tool, arguments_hash, body_json, intent_at, fence, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8) ON CONFLICT DO NOTHING`,
        [
          intent.tenant,
          intent.key,
          intent.tool,
          intent.argumentsHash,
          JSON.stringify(intent.body),
          intent.intentAt,
          intent.fence,
          now,
        ],
      );
      const row = await this.select(tx, intent.tenant, intent.key, true);
      if (row === undefined) throw new Error(`outbox row ${intent.key} vanished inside its transaction`);
      const decision = claimDecision(row, intent);
      if (decision.kind === 'mismatch') return { kind: 'mismatch' };
      if (decision.kind === 'stale') return { kind: 'stale', rowFence: row.fence };
      if (decision.kind === 'settled') {
        if (decision.raise) await this.raiseFence(tx, intent);
        return { kind: 'settled', row: { ...row, fence: Math.max(row.fence, intent.fence) } };
      }
      const claimed = await tx.query<RawOutboxRow>(
        `UPDATE ${this.table} SET fence = $3, status = 'sending', sends = sends + 1,
           first_sent_at = COALESCE(first_sent_at, $4), last_sent_at = $4
         WHERE tenant = $1 AND operation_key = $2 RETURNING ${COLUMNS}`,
        [intent.tenant, intent.key, intent.fence, now],
      );
      return { kind: 'claimed', row: toRow(claimed.rows[0]!) };
    });
  }

  /**
   * Records what a send by `fence` brought. The downstream's answer (`answered`, `rejected`) is recorded whoever
   * sent it, unless the row already holds one; anything else only while `fence` still holds the row (a newer
   * claimant records its own).
   */
  async record(tenant: string, key: string, fence: number, r: OutboxRecord): Promise<void> {
    const settled = SETTLED.includes(r.status);
    await this.pool.query(
      `UPDATE ${this.table} SET status = $4, outcome_json = $5, receipt = $6
       WHERE tenant = $1 AND operation_key = $2 AND status NOT IN ('answered', 'rejected') AND ($7 OR fence = $3)`,
      [tenant, key, fence, r.status, JSON.stringify(r.outcome ?? null), r.receipt ?? null, settled],
    );
  }

  /** The row of `tenant` under `key`, or undefined (no intent was ever written, so nothing was ever sent). */
  async read(tenant: string, key: string): Promise<OutboxRow | undefined> {
    const found = await this.pool.query<RawOutboxRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE tenant = $1 AND operation_key = $2`,
      [tenant, key],
    );
    return found.rows[0] === undefined ? undefined : toRow(found.rows[0]);
  }

  private async raiseFence(tx: PoolClient, intent: OutboxIntent): Promise<void> {
    await tx.query(`UPDATE ${this.table} SET fence = $3 WHERE tenant = $1 AND operation_key = $2`, [
      intent.tenant,
      intent.key,
      intent.fence,
    ]);
  }

  private async select(tx: PoolClient, tenant: string, key: string, lock: boolean): Promise<OutboxRow | undefined> {
    const found = await tx.query<RawOutboxRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE tenant = $1 AND operation_key = $2${lock ? ' FOR UPDATE' : ''}`,
      [tenant, key],
    );
    return found.rows[0] === undefined ? undefined : toRow(found.rows[0]);
  }

  private async transaction<T>(work: (tx: PoolClient) => Promise<T>): Promise<T> {
    const tx = await this.pool.connect();
    try {
      await tx.query('BEGIN');
      const out = await work(tx);
      await tx.query('COMMIT');
      return out;
    } catch (err) {
      await tx.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      tx.release();
    }
  }
}
