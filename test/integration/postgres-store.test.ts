/**
 * The stores' one PostgreSQL helper (src/stores/postgres.ts), on a private PostgreSQL this file starts
 * (host/server/postgres.ts): migrations apply once each however many processes start together, a database that
 * already holds a store's tables keeps its rows, and a transaction the server aborted for a serialization failure
 * runs again (with a control: one attempt only, the same conflict fails with 40001).
 */
import { PostgresDatabase, SCHEMA_VERSIONS_TABLE, type Migration } from '../../src/stores/postgres';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';

jest.setTimeout(120_000);

let pg: TestPostgres;
let url: string;
const open: PostgresDatabase[] = [];

beforeAll(async () => {
  pg = await startTestPostgres('pg-helper');
  url = pg.url;
});
afterAll(async () => {
  await Promise.all(open.map((db) => db.close().catch(() => undefined)));
  await pg?.stop();
});

let n = 0;
const unique = (): string => `c${Date.now().toString(36)}${(n += 1)}`;

function database(component: string, migrations: readonly Migration[]): PostgresDatabase {
  const db = new PostgresDatabase({ url, setting: 'TEST_URL', component, migrations });
  open.push(db);
  return db;
}

async function versions(db: PostgresDatabase, component: string): Promise<number[]> {
  const rows = await db.query<{ version: number }>(
    `SELECT version FROM ${SCHEMA_VERSIONS_TABLE} WHERE component = $1 ORDER BY version`,
    [component],
  );
  return rows.rows.map((r) => r.version);
}

test('processes starting together apply each migration exactly once, and a later version only itself', async () => {
  const component = unique();
  const table = `t_${component}`;
  // Not idempotent on purpose: a second run of version 1 would fail with "relation already exists".
  const v1: Migration = { version: 1, sql: `CREATE TABLE ${table} (id INTEGER PRIMARY KEY)` };
  const starters = Array.from({ length: 4 }, () => database(component, [v1]));
  await Promise.all(starters.map((db) => db.migrate()));
  expect(await versions(starters[0]!, component)).toEqual([1]);

  const v2: Migration = { version: 2, sql: `ALTER TABLE ${table} ADD COLUMN note TEXT NOT NULL DEFAULT ''` };
  const upgraded = database(component, [v1, v2]);
  await upgraded.query(`INSERT INTO ${table} (id, note) VALUES (1, 'after v2')`);
  expect(await versions(upgraded, component)).toEqual([1, 2]);
});

test('a database that already holds the tables keeps its rows and only records version 1', async () => {
  const component = unique();
  const table = `t_${component}`;
  const schema = `CREATE TABLE IF NOT EXISTS ${table} (id INTEGER PRIMARY KEY)`;
  const before = database(`${component}-bare`, []);
  await before.query(schema);
  await before.query(`INSERT INTO ${table} (id) VALUES (7)`);

  const db = database(component, [{ version: 1, sql: schema }]);
  expect((await db.query<{ id: number }>(`SELECT id FROM ${table}`)).rows).toEqual([{ id: 7 }]);
  expect(await versions(db, component)).toEqual([1]);
});

test('a migration that fails records nothing and is tried again on the next call', async () => {
  const component = unique();
  const db = database(component, [{ version: 1, sql: 'CREATE TABLE broken (' }]);
  await expect(db.migrate()).rejects.toThrow(/syntax error/);
  await expect(db.migrate()).rejects.toThrow(/syntax error/); // not a remembered failure: it ran again
  const fixed = database(component, [{ version: 1, sql: `CREATE TABLE t_${component} (id INTEGER)` }]);
  expect(await versions(fixed, component)).toEqual([1]);
});

test('migrations numbered out of order are refused before any connection', () => {
  expect(() => database(unique(), [{ version: 2, sql: 'SELECT 1' }])).toThrow(RangeError);
});

/**
 * Two serializable transactions that each read the table's total and insert a row: the classic write skew, which
 * PostgreSQL breaks by aborting one of them with 40001. Both first attempts read before either writes.
 */
async function writeSkew(maxAttempts: number): Promise<{ outcomes: PromiseSettledResult<void>[]; runs: number }> {
  const component = unique();
  const table = `t_${component}`;
  const db = database(component, [{ version: 1, sql: `CREATE TABLE ${table} (id TEXT PRIMARY KEY, total INT)` }]);
  await db.migrate();
  let read = 0;
  let bothRead: () => void = () => undefined;
  const barrier = new Promise<void>((resolve) => (bothRead = resolve));
  let runs = 0;
  const settled: Record<string, Promise<unknown>> = {};
  const txn = (id: string, other: string): Promise<void> =>
    db.transaction(
      async (c) => {
        runs += 1;
        const first = runs <= 2;
        // A retry waits until the other transaction has settled: PostgreSQL promises a retry does not fail again on
        // the same conflict only once the transaction it conflicted with is gone. Retried while that one is still
        // open, it can be aborted again (seen in CI under load).
        if (!first) await settled[other];
        const { rows } = await c.query<{ sum: string | null }>(`SELECT sum(total) AS sum FROM ${table}`);
        if (first) {
          if ((read += 1) === 2) bothRead();
          await barrier;
        }
        await c.query(`INSERT INTO ${table} (id, total) VALUES ($1, $2)`, [id, Number(rows[0]?.sum ?? 0) + 1]);
      },
      { isolation: 'serializable', maxAttempts },
    );
  const a = txn('a', 'b');
  const b = txn('b', 'a');
  settled.a = a.catch(() => undefined);
  settled.b = b.catch(() => undefined);
  const outcomes = await Promise.allSettled([a, b]);
  return { outcomes, runs };
}

test('a transaction aborted for a serialization failure runs again and commits', async () => {
  const { outcomes, runs } = await writeSkew(3);
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
  expect(runs).toBe(3); // the aborted one ran a second time
});

test('control: with one attempt the same conflict fails with a serialization failure (40001)', async () => {
  const { outcomes, runs } = await writeSkew(1);
  const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  expect(rejected).toHaveLength(1);
  expect((rejected[0]!.reason as { code?: string }).code).toBe('40001');
  expect(runs).toBe(2);
});

test('any other error rolls the transaction back and is not retried', async () => {
  const component = unique();
  const table = `t_${component}`;
  const db = database(component, [{ version: 1, sql: `CREATE TABLE ${table} (id INTEGER PRIMARY KEY)` }]);
  let runs = 0;
  const failing = db.transaction(async (c) => {
    runs += 1;
    await c.query(`INSERT INTO ${table} (id) VALUES (1)`);
    await c.query(`INSERT INTO ${table} (id) VALUES (1)`); // 23505: unique violation
  });
  await expect(failing).rejects.toMatchObject({ code: '23505' });
  expect(runs).toBe(1);
  expect((await db.query(`SELECT id FROM ${table}`)).rowCount).toBe(0);
});
