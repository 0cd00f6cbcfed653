import type { Database } from 'better-sqlite3';

/**
 * Runs `fn` in a transaction that takes the write lock when it begins (`BEGIN IMMEDIATE`): the one way a service
 * writes to a SQLite file that another connection may share (the orders service and its relay share one). In WAL
 * mode a transaction that reads first and writes after another connection committed fails at once with
 * SQLITE_BUSY, past the busy timeout; taking the lock first makes it wait its turn instead
 * (test/unit/shared-database.test.ts).
 */
export function writeTransaction<T>(db: Database, fn: () => T): T {
  return db.transaction(fn).immediate();
}
