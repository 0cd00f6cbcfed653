/** Schema, row mapping and the decision rules of the idempotency tables (used by `idempotency-store.ts`). */
import type { Database } from 'better-sqlite3';
import { DownstreamErrorCode, type OperationRecord } from '../downstream/protocol';

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

/** Creates the idempotency tables and indexes if they do not exist. */
export function migrateIdempotencySchema(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS idem_records (
      operation_key  TEXT PRIMARY KEY,
      arguments_hash TEXT NOT NULL,
      scope          TEXT NOT NULL,
      status         TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed', 'sealed')),
      result_json    TEXT,
      error_json     TEXT,
      receipt        TEXT,
      fence          INTEGER NOT NULL DEFAULT 0,
      created_at     INTEGER NOT NULL,
      expires_at     INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idem_records_expires ON idem_records (expires_at);
    CREATE TABLE IF NOT EXISTS idem_requests (
      id             INTEGER PRIMARY KEY AUTOINCREMENT,
      operation_key  TEXT NOT NULL,
      arguments_hash TEXT NOT NULL,
      fence          INTEGER NOT NULL,
      received_at    INTEGER NOT NULL,
      outcome        TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idem_requests_key ON idem_requests (operation_key);
    CREATE TABLE IF NOT EXISTS idem_effects (
      id             INTEGER PRIMARY KEY AUTOINCREMENT,
      operation_key  TEXT NOT NULL,
      receipt        TEXT NOT NULL,
      kind           TEXT NOT NULL,
      at             INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idem_effects_key ON idem_effects (operation_key);
  `);
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
