/**
 * Reads the durable records the explorer's invariants need from a downstream service's own SQLite file,
 * read-only (the service may still have it open): its effect log (`idem_effects`) and its request log
 * (`idem_requests`), both kept by services/idempotency-store.ts and never pruned.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { EffectRow, RequestEntry } from './explore-invariants';
import { hasTable, readRequestLog } from './request-log';

/** Every committed business effect of one service database, in commit order. */
export function readEffectLog(dbPath: string, service: string): EffectRow[] {
  const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
  try {
    if (!hasTable(db, 'idem_effects')) return []; // not on the services kit: its effects are counted by its stats
    const rows = db
      .prepare('SELECT operation_key AS operationKey, receipt, kind FROM idem_effects ORDER BY id')
      .all() as Omit<EffectRow, 'service'>[];
    return rows.map((r) => ({ service, ...r }));
  } finally {
    db.close();
  }
}

/** Every mutating request of one service database, tagged with the service. */
export function readRequestEntries(dbPath: string, service: string): RequestEntry[] {
  return readRequestLog(dbPath).map((r) => ({ service, ...r }));
}
