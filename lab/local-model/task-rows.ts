/** The rows the task judge (tasks.ts) reads, from the downstreams' own SQLite databases, read-only. */
import BetterSqlite3 from 'better-sqlite3';
import type { DebitRow, TicketRow } from './tasks';

function readAll<T>(dbPath: string, sql: string): T[] {
  const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

/** Every debit of a wallet database. */
export function readDebits(dbPath: string): DebitRow[] {
  return readAll<DebitRow>(
    dbPath,
    `SELECT operation_key AS operationKey, tenant, account, amount_minor AS amountMinor, currency,
            refunded_minor AS refundedMinor FROM wallet_debits ORDER BY created_at`,
  );
}

/** Every ticket of a ticketing database. */
export function readTickets(dbPath: string): TicketRow[] {
  return readAll<TicketRow>(
    dbPath,
    'SELECT open_key AS openKey, tenant, project, title, status FROM tickets ORDER BY rowid',
  );
}
