/**
 * Ledgerloop's idempotency contract on the team's own PostgreSQL: one table of key rows
 * (`ledgerloop_operations`, one per tenant and operation key), and `withOperation`, which runs the team's effect
 * and writes its key row in ONE transaction, with the fence check inside that same transaction:
 *
 *   const ops = new PgOperations({ url: process.env.DATABASE_URL!, setting: 'DATABASE_URL' });
 *   const out = await ops.withOperation(op, async (tx) => {
 *     await tx.query('INSERT INTO refunds (order_id, amount_minor) VALUES ($1, $2)', [order, amount]);
 *     return { receipt: `refund:${order}`, result: { order, refunded: amount } };
 *   });
 *
 * The row is inserted (or locked, `FOR UPDATE`) first, so a concurrent request under the same key waits for the
 * first one's commit and then reads its answer; the rules (sealed, stale fence, other arguments, replay) are the
 * SQLite kit's (`decide` in ../idempotency-rows.ts), decided on the locked row. Nothing is ever `in_progress` for
 * another transaction to see: the effect and the key row commit together or not at all, so a process killed
 * before the commit leaves neither, and a restart needs no orphan recovery. Key rows are never pruned (a lookup
 * after any time still answers); an intent older than the retention is refused before the transaction.
 */
import type { PoolClient } from 'pg';
import { DownstreamErrorCode, type OperationRecord } from '../../src/downstream/protocol';
import { PostgresDatabase, type Migration } from '../../src/stores/postgres';
import { BusinessRejection } from '../business-rejection';
import {
  checkedRetention,
  decide,
  intentRefusal,
  toOperationRecord,
  type ConflictCode,
  type RecordRow,
} from '../idempotency-rows';
import { DEFAULT_RETENTION_MS } from '../idempotency-store';

/** The key rows' table, in the team's database. */
export const OPERATIONS_TABLE = 'ledgerloop_operations';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE IF NOT EXISTS ${OPERATIONS_TABLE} (
      tenant         TEXT NOT NULL,
      operation_key  TEXT NOT NULL,
      arguments_hash TEXT NOT NULL,
      scope          TEXT NOT NULL,
      status         TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed', 'sealed')),
      result_json    TEXT,
      error_json     TEXT,
      receipt        TEXT,
      fence          BIGINT NOT NULL DEFAULT 0,
      created_at     BIGINT NOT NULL,
      expires_at     BIGINT NOT NULL,
      PRIMARY KEY (tenant, operation_key)
    )`,
  },
];

// BIGINT comes back from `pg` as a string: read the numbers as float8 (exact for epoch ms and fences).
const COLUMNS = `operation_key, arguments_hash, scope, status, result_json, error_json, receipt,
  fence::float8 AS fence, created_at::float8 AS created_at, expires_at::float8 AS expires_at`;

/** One mutating request, as `withOperation` sees it (the middleware reads it from the request's headers). */
export interface Operation {
  readonly tenant: string;
  readonly key: string;
  readonly argumentsHash: string;
  /** The caller's fence (`X-Fence`); lower than the key row's accepted fence: refused inside the transaction. */
  readonly fence: number;
  /** The effect the key protects, e.g. `shop.refund`; a key reused under another scope is a mismatch. */
  readonly scope: string;
  /** When the caller recorded the intent (`X-Intent-At`, epoch ms). */
  readonly intentAtMs: number;
}

/** What `work` returns: the effect's receipt and the JSON result retained and replayed for the key. */
export interface OperationEffect {
  readonly receipt: string;
  readonly result: unknown;
}

/** The outcome of `withOperation`. Only `completed` ran `work` (and committed it). */
export type OperationOutcome =
  | { readonly kind: 'completed' | 'replayed' | 'failed' | 'retained_failure'; readonly record: OperationRecord }
  | { readonly kind: 'conflict'; readonly code: ConflictCode; readonly message: string }
  | {
      readonly kind: 'refused';
      readonly code: typeof DownstreamErrorCode.IntentExpired | typeof DownstreamErrorCode.IntentTimeMissing;
      readonly message: string;
    };

/** The answer of `lookup`: a sealed key reads as not found and sealed, for ever. */
export type PgLookupResult =
  | { readonly kind: 'found'; readonly record: OperationRecord }
  | { readonly kind: 'not_found'; readonly sealed: boolean };

export interface PgOperationsOptions {
  /** A postgres:// URL of the team's database (the one its effects are written to). */
  readonly url: string;
  /** Where the URL came from, e.g. `DATABASE_URL`: the only name an error about it repeats (never the URL). */
  readonly setting: string;
  /** The key retention the service declares: an older intent is refused. Default 24 h, like Stripe's. */
  readonly retentionMs?: number;
  /** Pool size. Default 4 (the helper's): each operation holds one connection for one short transaction. */
  readonly max?: number;
  /** Injectable clock (epoch ms), for tests. Default `Date.now`. */
  readonly now?: () => number;
}

/** The key rows of one service on PostgreSQL: `withOperation`, `lookup` and `seal` on one table. */
export class PgOperations {
  readonly retentionMs: number;
  private readonly db: PostgresDatabase;
  private readonly now: () => number;

  constructor(options: PgOperationsOptions) {
    this.retentionMs = checkedRetention(options.retentionMs, DEFAULT_RETENTION_MS);
    this.now = options.now ?? Date.now;
    this.db = new PostgresDatabase({
      url: options.url,
      setting: options.setting,
      component: 'operations',
      migrations: MIGRATIONS,
      ...(options.max === undefined ? {} : { max: options.max }),
    });
  }

  /**
   * Runs `work(tx)` and records its effect under `op.key` in one transaction, after the rules: a sealed key, a
   * stale fence or other arguments refuse (`conflict`, nothing of `work` runs); a completed or failed key answers
   * from its row (`replayed`, `retained_failure`). A `BusinessRejection` from `work` rolls its writes back and
   * retains the refusal (`failed`). Any other throw rolls everything back, the key row included, and is rethrown.
   * `work` may run again, whole, if PostgreSQL aborts the transaction for a deadlock: it must write only through `tx`.
   */
  async withOperation(op: Operation, work: (tx: PoolClient) => Promise<OperationEffect>): Promise<OperationOutcome> {
    const now = this.now();
    const refusal = intentRefusal(op.intentAtMs, now, this.retentionMs);
    if (refusal !== undefined) return { kind: 'refused', ...refusal };
    return this.db.transaction(async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO ${OPERATIONS_TABLE} (tenant, operation_key, arguments_hash, scope, status, fence, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7) ON CONFLICT DO NOTHING`,
        [op.tenant, op.key, op.argumentsHash, op.scope, op.fence, now, now + this.retentionMs],
      );
      if (inserted.rowCount === 1) return this.perform(tx, op, work);
      const row = await this.row(tx, op.tenant, op.key, true);
      if (row === undefined) throw new Error(`key row ${op.key} vanished inside its transaction`);
      const decision = decide(row, op);
      if (decision.kind === 'conflict') return decision;
      if (decision.kind === 'in_progress') throw new Error(`key row ${op.key} is in_progress outside its transaction`);
      if (op.fence > row.fence) await this.raiseFence(tx, op);
      return { kind: decision.kind, record: toOperationRecord({ ...row, fence: Math.max(row.fence, op.fence) }) };
    });
  }

  /** The key row of `tenant` under `key`; with `seal`, a missing key is sealed in the same transaction. */
  async lookup(tenant: string, key: string, options: { readonly seal?: boolean } = {}): Promise<PgLookupResult> {
    return this.db.transaction(async (tx) => {
      if (options.seal === true) await this.insertSeal(tx, tenant, key);
      const row = await this.row(tx, tenant, key, false);
      if (row === undefined) return { kind: 'not_found', sealed: false };
      if (row.status === 'sealed') return { kind: 'not_found', sealed: true };
      return { kind: 'found', record: toOperationRecord(row) };
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private async perform(
    tx: PoolClient,
    op: Operation,
    work: (tx: PoolClient) => Promise<OperationEffect>,
  ): Promise<OperationOutcome> {
    await tx.query('SAVEPOINT ledgerloop_effect');
    let effect: OperationEffect;
    try {
      effect = await work(tx);
    } catch (err) {
      if (!(err instanceof BusinessRejection)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT ledgerloop_effect');
      const error = { ...err.details, error: DownstreamErrorCode.Rejected, reason: err.reason, message: err.message };
      await this.finish(tx, op, 'failed', { error_json: JSON.stringify(error) });
      for (const key of err.sealKeys) await this.insertSeal(tx, op.tenant, key);
      return { kind: 'failed', record: await this.record(tx, op) };
    }
    await tx.query('RELEASE SAVEPOINT ledgerloop_effect');
    const result = JSON.stringify(effect.result ?? null);
    await this.finish(tx, op, 'completed', { receipt: effect.receipt, result_json: result });
    return { kind: 'completed', record: await this.record(tx, op) };
  }

  private async finish(
    tx: PoolClient,
    op: Operation,
    status: 'completed' | 'failed',
    fields: { receipt?: string; result_json?: string; error_json?: string },
  ): Promise<void> {
    await tx.query(
      `UPDATE ${OPERATIONS_TABLE} SET status = $3, receipt = $4, result_json = $5, error_json = $6
       WHERE tenant = $1 AND operation_key = $2`,
      [op.tenant, op.key, status, fields.receipt ?? null, fields.result_json ?? null, fields.error_json ?? null],
    );
  }

  /** Seals `key` when it has no row (a row, whatever it holds, stays as it is). Seals are never pruned. */
  private async insertSeal(tx: PoolClient, tenant: string, key: string): Promise<void> {
    const now = this.now();
    await tx.query(
      `INSERT INTO ${OPERATIONS_TABLE} (tenant, operation_key, arguments_hash, scope, status, fence, created_at, expires_at)
       VALUES ($1, $2, '', '', 'sealed', 0, $3, $4) ON CONFLICT DO NOTHING`,
      [tenant, key, now, now + this.retentionMs],
    );
  }

  private async raiseFence(tx: PoolClient, op: Operation): Promise<void> {
    await tx.query(`UPDATE ${OPERATIONS_TABLE} SET fence = $3 WHERE tenant = $1 AND operation_key = $2`, [
      op.tenant,
      op.key,
      op.fence,
    ]);
  }

  private async record(tx: PoolClient, op: Operation): Promise<OperationRecord> {
    const row = await this.row(tx, op.tenant, op.key, false);
    if (row === undefined) throw new Error(`key row ${op.key} vanished inside its transaction`);
    return toOperationRecord(row);
  }

  private async row(tx: PoolClient, tenant: string, key: string, lock: boolean): Promise<RecordRow | undefined> {
    const found = await tx.query<RecordRow>(
      `SELECT ${COLUMNS} FROM ${OPERATIONS_TABLE} WHERE tenant = $1 AND operation_key = $2${lock ? ' FOR UPDATE' : ''}`,
      [tenant, key],
    );
    return found.rows[0];
  }
}
