/** Schema, row mapping and the decision rules of the idempotency tables (used by `idempotency-store.ts`). */
import type { Database } from 'better-sqlite3';
import { writeTransaction } from './sqlite-write';
import { DownstreamErrorCode, type OperationRecord } from '../src/downstream/protocol';

/** Columns selected for an idempotency record row. */
export const RECORD_COLUMNS =
  'operation_key, arguments_hash, scope, status, result_json, error_json, receipt, fence, created_at, expires_at';

/** One `idem_records` row as SQLite returns it. Times are epoch milliseconds. */
export interface RecordRow {
  readonly operation_key: string;
  readonly arguments_hash: string;
  readonly scope: string;
  readonly status: OperationRecord['status'];
  readonly result_json: string | null;
  readonly error_json: string | null;
  readonly receipt: string | null;
  readonly fence: number;
  readonly created_at: number;
  readonly expires_at: number;
}

/** Maps a row to the protocol's `OperationRecord` (ISO timestamps, parsed JSON, absent fields omitted). */
export function toOperationRecord(row: RecordRow): OperationRecord {
  return {
    operationKey: row.operation_key,
    argumentsHash: row.arguments_hash,
    scope: row.scope,
    status: row.status,
    ...(row.receipt === null ? {} : { receipt: row.receipt }),
    ...(row.result_json === null ? {} : { result: JSON.parse(row.result_json) as unknown }),
    ...(row.error_json === null ? {} : { error: JSON.parse(row.error_json) as { error: string; message: string } }),
    fence: row.fence,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
  };
}

/** The `idem_records` table: one record per (tenant, operation key). */
const RECORDS_TABLE = `
    CREATE TABLE IF NOT EXISTS idem_records (
      tenant         TEXT NOT NULL DEFAULT '',
      operation_key  TEXT NOT NULL,
      arguments_hash TEXT NOT NULL,
      scope          TEXT NOT NULL,
      status         TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed', 'sealed')),
      result_json    TEXT,
      error_json     TEXT,
      receipt        TEXT,
      fence          INTEGER NOT NULL DEFAULT 0,
      created_at     INTEGER NOT NULL,
      expires_at     INTEGER NOT NULL,
      PRIMARY KEY (tenant, operation_key)
    )`;

function columns(db: Database, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
}

/**
 * Creates the idempotency tables and indexes if they do not exist, and migrates a database from before tenant
 * scoping in place: `idem_records` is rebuilt with the primary key (tenant, operation_key), its old rows kept
 * under tenant '' (no tenant's lookup reads them: drain in-flight operations before upgrading a demo store);
 * `idem_requests` and `idem_effects` gain a `tenant` column (default ''). `idem_refusals` holds one counter per
 * refusal code (bounded by the closed set of codes, see `refusalCode`). It takes the write lock when it begins: a
 * relay may open the same file while the service writes it.
 */
export function migrateIdempotencySchema(db: Database): void {
  writeTransaction(db, () => {
    const existing = columns(db, 'idem_records');
    if (existing.length > 0 && !existing.includes('tenant')) {
      db.exec(`ALTER TABLE idem_records RENAME TO idem_records_v1; DROP INDEX IF EXISTS idem_records_expires;`);
      db.exec(RECORDS_TABLE);
      db.exec(`INSERT INTO idem_records (tenant, ${RECORD_COLUMNS}) SELECT '', ${RECORD_COLUMNS} FROM idem_records_v1;
               DROP TABLE idem_records_v1;`);
    }
    db.exec(`
    ${RECORDS_TABLE};
    CREATE INDEX IF NOT EXISTS idem_records_expires ON idem_records (expires_at);
    CREATE TABLE IF NOT EXISTS idem_requests (
      id             INTEGER PRIMARY KEY AUTOINCREMENT,
      operation_key  TEXT NOT NULL,
      arguments_hash TEXT NOT NULL,
      fence          INTEGER NOT NULL,
      received_at    INTEGER NOT NULL,
      outcome        TEXT NOT NULL,
      tenant         TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX IF NOT EXISTS idem_requests_key ON idem_requests (operation_key);
    CREATE TABLE IF NOT EXISTS idem_effects (
      id             INTEGER PRIMARY KEY AUTOINCREMENT,
      operation_key  TEXT NOT NULL,
      receipt        TEXT NOT NULL,
      kind           TEXT NOT NULL,
      at             INTEGER NOT NULL,
      tenant         TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX IF NOT EXISTS idem_effects_key ON idem_effects (operation_key);
    CREATE TABLE IF NOT EXISTS idem_refusals (
      code           TEXT PRIMARY KEY,
      count          INTEGER NOT NULL,
      last_at        INTEGER NOT NULL
    );
  `);
    for (const table of ['idem_requests', 'idem_effects']) {
      if (!columns(db, table).includes('tenant')) {
        db.exec(`ALTER TABLE ${table} ADD COLUMN tenant TEXT NOT NULL DEFAULT ''`);
      }
    }
  });
}

/** The refusal codes counted under their own name; any other code is counted as `other` (bounded table). */
export const COUNTED_REFUSAL_CODES: ReadonlySet<string> = new Set([
  DownstreamErrorCode.BadRequest,
  DownstreamErrorCode.ArgumentsHashInvalid,
  DownstreamErrorCode.IntentTimeMissing,
  DownstreamErrorCode.IntentExpired,
  DownstreamErrorCode.CapabilityInvalid,
  DownstreamErrorCode.SealRequiresPost,
]);

/** The counter a refusal code goes to. */
export function refusalCode(code: string): string {
  return COUNTED_REFUSAL_CODES.has(code) ? code : 'other';
}

/** Codes of the 409 conflicts the rules produce. */
export type ConflictCode =
  | typeof DownstreamErrorCode.InProgress
  | typeof DownstreamErrorCode.ArgumentsMismatch
  | typeof DownstreamErrorCode.KeySealed
  | typeof DownstreamErrorCode.StaleFence;

/** What the rules decide for a request whose key already has a record. */
export type Decision =
  | { readonly kind: 'conflict'; readonly code: ConflictCode; readonly message: string }
  | { readonly kind: 'replayed' | 'retained_failure' | 'in_progress' };

/** The rules for an existing record, in order: sealed, stale fence, other arguments, then by status. */
export function decide(
  row: RecordRow,
  request: { readonly key: string; readonly argumentsHash: string; readonly fence: number; readonly scope: string },
): Decision {
  const key = request.key;
  if (row.status === 'sealed') {
    return { kind: 'conflict', code: DownstreamErrorCode.KeySealed, message: `key ${key} was sealed by a lookup` };
  }
  if (request.fence < row.fence) {
    const message = `fence ${request.fence} is lower than the accepted fence ${row.fence} for key ${key}`;
    return { kind: 'conflict', code: DownstreamErrorCode.StaleFence, message };
  }
  if (row.arguments_hash !== request.argumentsHash || row.scope !== request.scope) {
    const message = `key ${key} was first used with other arguments (or another scope)`;
    return { kind: 'conflict', code: DownstreamErrorCode.ArgumentsMismatch, message };
  }
  if (row.status === 'completed') return { kind: 'replayed' };
  if (row.status === 'failed') return { kind: 'retained_failure' };
  return { kind: 'in_progress' };
}

/** How far in the future an intent time may lie (clock skew between caller and service): 5 minutes. */
export const MAX_INTENT_SKEW_MS = 300_000;

/** Codes of a request refused for its intent time. */
export type IntentRefusalCode = typeof DownstreamErrorCode.IntentExpired | typeof DownstreamErrorCode.IntentTimeMissing;

/**
 * Why a request's intent time is refused at `now`, or undefined when it is admissible: not finite or further than
 * `MAX_INTENT_SKEW_MS` in the future (`IntentTimeMissing`), older than the retention (`IntentExpired`). Every
 * store (SQLite, PostgreSQL) decides by this one function.
 */
export function intentRefusal(
  intentAtMs: number,
  now: number,
  retentionMs: number,
): { code: IntentRefusalCode; message: string } | undefined {
  if (!Number.isFinite(intentAtMs)) {
    return { code: DownstreamErrorCode.IntentTimeMissing, message: 'the request has no usable intent time' };
  }
  if (intentAtMs > now + MAX_INTENT_SKEW_MS) {
    const message = `the intent time ${new Date(intentAtMs).toISOString()} lies in the future`;
    return { code: DownstreamErrorCode.IntentTimeMissing, message };
  }
  const age = now - intentAtMs;
  if (age > retentionMs) {
    const message = `the intent is ${age} ms old; keys are retained for ${retentionMs} ms: reconcile by lookup instead`;
    return { code: DownstreamErrorCode.IntentExpired, message };
  }
  return undefined;
}

/** The retention a store declares: `retentionMs`, or 24 h when absent; anything but a positive integer throws. */
export function checkedRetention(retentionMs: number | undefined, fallback: number): number {
  const ms = retentionMs ?? fallback;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new RangeError(`retentionMs must be a positive integer, got ${ms}`);
  return ms;
}
