/**
 * A service's database is shared by processes (the orders service and its outbox relay write the same file), and
 * SQLite in WAL mode fails a transaction that read first and then writes, when another connection committed in
 * between, at once with SQLITE_BUSY: the busy timeout does not apply. The idempotency store's transactions that
 * write therefore take the write lock when they begin (`BEGIN IMMEDIATE`) and wait for the other writer instead
 * of refusing a valid request with `effect not committed: database is locked` (500, `committed: false`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { IdempotencyStore, type ApplyEffect } from '../../services/idempotency-store';
import { openServiceDatabase } from '../../services/service-host';

let dir: string;
let db: Database;
let other: Database;
let store: IdempotencyStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-shared-db-'));
  const file = path.join(dir, 'service.db');
  db = openServiceDatabase(file);
  db.exec('CREATE TABLE ledger (id INTEGER PRIMARY KEY AUTOINCREMENT, amount INTEGER NOT NULL)');
  store = new IdempotencyStore({ db });
  // The other process's connection (the relay's), which gives up at once when the file is locked.
  other = new BetterSqlite3(file);
  other.pragma('busy_timeout = 0');
  other.exec('CREATE TABLE IF NOT EXISTS relay_marks (at INTEGER NOT NULL)');
});
afterEach(() => {
  other.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const request = (key: string) => ({
  tenant: 'acme',
  key,
  argumentsHash: 'a'.repeat(64),
  fence: 0,
  scope: 'test.charge',
  intentAtMs: Date.now(),
});

/** The effect, with the other process's write landing inside the store's transaction, after its first read. */
function chargeWhileTheOtherWrites(attempts: { other: string[] }): ApplyEffect {
  return (conn) => {
    try {
      other.prepare('INSERT INTO relay_marks (at) VALUES (?)').run(Date.now());
      attempts.other.push('committed');
    } catch (err) {
      attempts.other.push((err as { code?: string }).code ?? String(err));
    }
    const info = conn.prepare('INSERT INTO ledger (amount) VALUES (?)').run(100);
    return { receipt: `r_${info.lastInsertRowid}`, result: { amount: 100 } };
  };
}

test("a commit holds the write lock from its start, so another process's write cannot make it fail", () => {
  const begun = store.begin(request('k1'));
  expect(begun.kind).toBe('proceed');
  if (begun.kind !== 'proceed') return;
  const attempts = { other: [] as string[] };
  const committed = store.commit(begun.pending, chargeWhileTheOtherWrites(attempts));
  expect(committed.kind).toBe('completed');
  // The other writer waited its turn (here: gave up at once, having no busy timeout); it did not win the race.
  expect(attempts.other).toEqual(['SQLITE_BUSY']);
  expect((db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number }).n).toBe(1);
});

test('the other process writes once the commit is done', () => {
  expect(store.runIdempotent(request('k2'), () => ({ receipt: 'r', result: null })).kind).toBe('completed');
  expect(() => other.prepare('INSERT INTO relay_marks (at) VALUES (?)').run(Date.now())).not.toThrow();
});
