/**
 * Reads a downstream service's own request log (`idem_requests`, see services/idempotency-store.ts) from its
 * SQLite file, read-only, and answers what /admin/stats does not: which requests the contract refused, and
 * whether any request from a stale owner or with other arguments under a used key got through. Requests refused
 * before the rules (invalid, unsigned, too old) are not in the log, only counted per code in `idem_refusals`;
 * `withRefusals` adds those counters to a summary.
 */
import BetterSqlite3 from 'better-sqlite3';
import { DownstreamErrorCode } from '../../src/downstream/protocol';

/** Request outcomes that mean "refused by the contract: no effect from this request". */
export const REFUSED_OUTCOMES: ReadonlySet<string> = new Set([
  DownstreamErrorCode.StaleFence,
  DownstreamErrorCode.ArgumentsMismatch,
  DownstreamErrorCode.KeySealed,
  DownstreamErrorCode.InProgress,
  DownstreamErrorCode.ArgumentsHashInvalid,
  DownstreamErrorCode.BadRequest,
  'Capability.Invalid',
]);

export interface RequestRow {
  readonly id: number;
  readonly operationKey: string;
  readonly argumentsHash: string;
  readonly fence: number;
  readonly outcome: string;
}

export interface RequestLogSummary {
  readonly requests: number;
  /** Refused by the contract, by outcome code. */
  readonly refusedBy: Readonly<Record<string, number>>;
  readonly refused: number;
  /** Admitted although their fence was below one already admitted for the key. */
  readonly staleAdmitted: number;
  /** Admitted although the key was first used with other arguments. */
  readonly mismatchedAdmitted: number;
}

/** Pure analysis of rows in arrival order (by id). */
export function summarizeRequests(rows: readonly RequestRow[]): RequestLogSummary {
  const refusedBy: Record<string, number> = {};
  const maxFence = new Map<string, number>();
  const firstHash = new Map<string, string>();
  let refused = 0;
  let staleAdmitted = 0;
  let mismatchedAdmitted = 0;
  for (const r of [...rows].sort((a, b) => a.id - b.id)) {
    if (REFUSED_OUTCOMES.has(r.outcome)) {
      refused += 1;
      refusedBy[r.outcome] = (refusedBy[r.outcome] ?? 0) + 1;
      continue;
    }
    const highest = maxFence.get(r.operationKey);
    if (highest !== undefined && r.fence < highest) staleAdmitted += 1;
    maxFence.set(r.operationKey, Math.max(highest ?? r.fence, r.fence));
    const first = firstHash.get(r.operationKey);
    if (first === undefined) firstHash.set(r.operationKey, r.argumentsHash);
    else if (first !== r.argumentsHash) mismatchedAdmitted += 1;
  }
  return { requests: rows.length, refusedBy, refused, staleAdmitted, mismatchedAdmitted };
}

/** Whether `db` has table `name` (a downstream not on the services kit, such as an HTTP API's, has no kit tables). */
export function hasTable(db: BetterSqlite3.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

/**
 * Reads every request row of a service database, read-only (the service may still have it open); empty for a
 * database the services kit does not keep (it logs no request).
 */
export function readRequestLog(dbPath: string): RequestRow[] {
  const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
  try {
    if (!hasTable(db, 'idem_requests')) return [];
    return db
      .prepare(
        `SELECT id, operation_key AS operationKey, arguments_hash AS argumentsHash, fence, outcome
         FROM idem_requests ORDER BY id`,
      )
      .all() as RequestRow[];
  } finally {
    db.close();
  }
}

/** Adds summaries of several services together. */
export function mergeSummaries(parts: readonly RequestLogSummary[]): RequestLogSummary {
  const refusedBy: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.refusedBy)) refusedBy[k] = (refusedBy[k] ?? 0) + v;
  const sum = (f: (p: RequestLogSummary) => number): number => parts.reduce((n, p) => n + f(p), 0);
  return {
    requests: sum((p) => p.requests),
    refusedBy,
    refused: sum((p) => p.refused),
    staleAdmitted: sum((p) => p.staleAdmitted),
    mismatchedAdmitted: sum((p) => p.mismatchedAdmitted),
  };
}

/** The refusal counters of a service database (`idem_refusals`), read-only; empty for a database without them. */
export function readRefusalCounts(dbPath: string): Record<string, number> {
  const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
  try {
    if (!hasTable(db, 'idem_refusals')) return {};
    const rows = db.prepare('SELECT code, count FROM idem_refusals').all() as { code: string; count: number }[];
    return Object.fromEntries(rows.map((r) => [r.code, r.count]));
  } finally {
    db.close();
  }
}

/** A summary with the mutating requests refused before the rules (counted, not logged) added as refused requests. */
export function withRefusals(summary: RequestLogSummary, counts: Readonly<Record<string, number>>): RequestLogSummary {
  const refusedBy: Record<string, number> = { ...summary.refusedBy };
  let extra = 0;
  for (const [code, n] of Object.entries(counts)) {
    if (code.startsWith('lookup:')) continue; // lookups and seals are not mutating requests
    refusedBy[code] = (refusedBy[code] ?? 0) + n;
    extra += n;
  }
  return { ...summary, requests: summary.requests + extra, refused: summary.refused + extra, refusedBy };
}
