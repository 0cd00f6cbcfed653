/**
 * The fenced local outbox (src/downstream/outbox) in front of a vendor API that takes no fence: the vendor payments
 * server (services/vendor-payments, its own process and SQLite storage) behind the `payments_charge` HTTP tool, and
 * the outbox table in each store: a private real PostgreSQL, and an SQLite file. Two workers are two connections
 * (two pools, or two handles on the file) and two transports over the same table and the same vendor. Every send
 * and every charge is counted in the vendor's own storage; the same tests run on both stores.
 */
import { writeFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import path from 'node:path';
import { Pool } from 'pg';
import type { HttpTransport } from '../../src/domain/transport';
import { ToolDeclarationError } from '../../src/domain/tool-check';
import { HttpApiTransport } from '../../src/downstream/http-transport';
import { OutboxTransport } from '../../src/downstream/outbox/outbox-transport';
import type { OutboxStore } from '../../src/downstream/outbox/outbox-store';
import { PgOutbox } from '../../src/downstream/outbox/pg-outbox';
import { SqliteOutbox } from '../../src/downstream/outbox/sqlite-outbox';
import type { AttemptCall, LookupCall } from '../../src/downstream/transport';
import { attemptCall } from '../helpers/attempt-call';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { spawnVendor, VENDOR_API_KEY, type Vendor } from '../helpers/vendor';
import { paymentsCharge } from '../support/transports/tools';

jest.setTimeout(120_000);

let pg: TestPostgres;
let vendor: Vendor;
const pools: Pool[] = [];
const files: SqliteOutbox[] = [];

/** The outbox stores the tests run on: each opens one more connection to the same table. */
const STORES: readonly [string, () => OutboxStore][] = [
  [
    'PostgreSQL',
    () => {
      const pool = new Pool({ connectionString: pg.url, max: 2 });
      pools.push(pool);
      return new PgOutbox({ pool });
    },
  ],
  [
    'SQLite',
    () => {
      const store = new SqliteOutbox({ file: path.join(pg.dir, 'outbox.db') });
      files.push(store);
      return store;
    },
  ],
];

/** One worker: its own connection to the outbox, its own HTTP transport to the vendor, behind the outbox. */
function workerOn(open: () => OutboxStore): {
  outbox: OutboxStore;
  direct: HttpApiTransport;
  transport: OutboxTransport;
} {
  const outbox = open();
  const direct = new HttpApiTransport(paymentsCharge.transport as HttpTransport, {
    baseUrl: vendor.url,
    secrets: { PAYMENTS_API_KEY: VENDOR_API_KEY },
  });
  return { outbox, direct, transport: new OutboxTransport(outbox, direct) };
}

beforeAll(async () => {
  pg = await startTestPostgres('outbox-transport');
  vendor = await spawnVendor(pg.dir);
  await (STORES[0]![1]() as PgOutbox).createTable();
  (STORES[1]![1]() as SqliteOutbox).createTable();
});
afterEach(async () => {
  await vendor.admin('DELETE', '/admin/faults');
});
afterAll(async () => {
  await vendor?.stop();
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  for (const f of files) f.close();
  await pg?.stop();
});

/** Waits for `seen` (an event, polled), bounded so a hung wait fails instead of hanging the file. */
async function until(seen: () => Promise<boolean>, limitMs = 30_000): Promise<void> {
  const stop = Date.now() + limitMs;
  while (!(await seen())) {
    if (Date.now() > stop) throw new Error('the awaited state never came');
    await new Promise((r) => setTimeout(r, 20));
  }
}

let n = 0;
const unique = (): string => `op_${Date.now().toString(36)}_${(n += 1)}`;

function charge(key: string, fence: number): AttemptCall {
  const body = { tenant: 'acme', customer: 'cus_outbox', amount: { minor: 1250, currency: 'EUR' } };
  return attemptCall(paymentsCharge, body, { runId: 'r', providerCallId: 'p', logicalCallId: key, key }, { fence });
}

function lookupOf(call: AttemptCall): LookupCall {
  return { tool: call.tool, intent: call.intent, key: call.key, body: call.body, seal: false };
}

/** The vendor's own counters: requests it received under any key, and replays of a saved key. */
async function vendorStats(): Promise<{ requests: number; replays: number }> {
  return (await vendor.admin('GET', '/admin/stats')) as { requests: number; replays: number };
}

/** Charges in the vendor's own storage for the key the call sends (the tool sets `metadata.ledgerloop_key`). */
const chargesFor = (call: AttemptCall): number =>
  vendor.count('charges', { metadataKey: 'ledgerloop_key', value: `ll_${call.key}` });

describe.each(STORES)('the fenced local outbox on %s', (_store, open) => {
  const worker = () => workerOn(open);

  test('a fenced-out worker is refused inside the outbox transaction and the vendor counts no request from it; the current fence sends once', async () => {
    const key = unique();
    const current = worker();
    const stale = worker();
    const before = await vendorStats();

    // The positive control: the current fence sends once, through the outbox, and the vendor counts it.
    const sent = await current.transport.send(charge(key, 2_000));
    expect(sent).toMatchObject({ kind: 'ok', status: 200, replayed: false });
    expect(await vendorStats()).toMatchObject({ requests: before.requests + 1, replays: before.replays });
    expect(chargesFor(charge(key, 0))).toBe(1);

    // The fenced-out worker: refused in the claim's transaction, typed as a Ledgerloop service refuses a stale fence.
    const refused = await stale.transport.send(charge(key, 1_000));
    expect(refused).toMatchObject({ kind: 'rejected', status: 409, code: 'Fence.Stale' });
    expect(await vendorStats()).toMatchObject({ requests: before.requests + 1, replays: before.replays });
    expect(await stale.outbox.read('acme', key)).toMatchObject({ fence: 2_000, status: 'answered', sends: 1 });

    // The control that the count can move: the same stale attempt without the outbox does reach the vendor.
    const bypass = await stale.direct.send(charge(key, 1_000));
    expect(bypass).toMatchObject({ kind: 'ok', replayed: true });
    expect(await vendorStats()).toMatchObject({ requests: before.requests + 2, replays: before.replays + 1 });
    expect(chargesFor(charge(key, 0))).toBe(1);
  });

  test('a worker fenced out while the current send is still in flight sends nothing; the vendor holds one charge', async () => {
    const key = unique();
    const current = worker();
    const stale = worker();
    const before = await vendorStats();
    // The vendor holds the current fence's request before it commits, so its send is in flight below.
    await vendor.arm({ at: 'before_commit', do: 'delay', path: '/v1/charges', ms: 1_500 });
    const inFlight = current.transport.send(charge(key, 2_000));
    await until(async () => (await current.outbox.read('acme', key))?.status === 'sending');
    const refused = await stale.transport.send(charge(key, 1_000));
    expect(refused).toMatchObject({ kind: 'rejected', status: 409, code: 'Fence.Stale' });
    expect(await inFlight).toMatchObject({ kind: 'ok', replayed: false });
    expect(await current.outbox.read('acme', key)).toMatchObject({ fence: 2_000, status: 'answered', sends: 1 });
    expect(await vendorStats()).toMatchObject({ requests: before.requests + 1, replays: before.replays });
    expect(chargesFor(charge(key, 0))).toBe(1);
  });

  test('a response lost after the relay sent it: the row is UNKNOWN, the lookup records the one charge the vendor holds on it, and the next attempt replays it without a request', async () => {
    const key = unique();
    const w = worker();
    await vendor.arm({ at: 'after_commit', do: 'drop_response', path: '/v1/charges' });
    const lost = await w.transport.send(charge(key, 1_000));
    expect(lost.kind).toBe('response_lost');
    expect(await w.outbox.read('acme', key)).toMatchObject({ status: 'unknown', sends: 1 });
    expect(chargesFor(charge(key, 0))).toBe(1);

    const found = await w.transport.lookup(lookupOf(charge(key, 0)));
    expect(found).toMatchObject({ kind: 'found', status: 'completed' });
    expect(await w.outbox.read('acme', key)).toMatchObject({ status: 'answered' });

    const before = await vendorStats();
    const again = await w.transport.send(charge(key, 2_000));
    expect(again).toMatchObject({ kind: 'ok', replayed: true });
    expect((again as { body: { id: string } }).body.id).toBe((found as { receipt: string }).receipt);
    expect(await vendorStats()).toMatchObject({ requests: before.requests });
    expect(chargesFor(charge(key, 0))).toBe(1);
  });

  test('a response lost after the relay sent it, then resent by a newer attempt: it goes out under the same vendor key, the vendor replays it, and holds one charge', async () => {
    const key = unique();
    const w = worker();
    await vendor.arm({ at: 'after_commit', do: 'drop_response', path: '/v1/charges' });
    expect((await w.transport.send(charge(key, 1_000))).kind).toBe('response_lost');
    const before = await vendorStats();
    const answered = await w.transport.send(charge(key, 2_000));
    expect(answered).toMatchObject({ kind: 'ok', replayed: true });
    expect(await vendorStats()).toMatchObject({ requests: before.requests + 1, replays: before.replays + 1 });
    expect(await w.outbox.read('acme', key)).toMatchObject({ status: 'answered', sends: 2, fence: 2_000 });
    expect(chargesFor(charge(key, 0))).toBe(1);
  });

  test('no row under the key: nothing was ever sent through the outbox, and the lookup says not found, unsealed', async () => {
    const w = worker();
    expect(await w.transport.lookup(lookupOf(charge(unique(), 0)))).toEqual({ kind: 'not_found', sealed: false });
  });

  test('the same key with other arguments is refused before anything is sent', async () => {
    const key = unique();
    const w = worker();
    expect(await w.transport.send(charge(key, 1_000))).toMatchObject({ kind: 'ok' });
    const before = await vendorStats();
    const other = attemptCall(
      paymentsCharge,
      { tenant: 'acme', customer: 'cus_outbox', amount: { minor: 9999, currency: 'EUR' } },
      { runId: 'r', providerCallId: 'p', logicalCallId: key, key },
      { fence: 2_000 },
    );
    expect(await w.transport.send(other)).toMatchObject({ kind: 'rejected', code: 'Idempotency.ArgumentsMismatch' });
    expect(await vendorStats()).toMatchObject({ requests: before.requests });
  });
});

describe('an outbox that cannot serve refuses at worker start', () => {
  test('SQLite: a missing table refuses with Tools.DeclarationInvalid; the created table passes', async () => {
    const store = new SqliteOutbox({ file: path.join(pg.dir, 'outbox.db'), table: 'team_outbox_missing' });
    files.push(store);
    await expect(store.verify()).rejects.toThrow(ToolDeclarationError);
    await expect(store.verify()).rejects.toThrow(/team_outbox_missing does not exist/);
    store.createTable();
    await expect(store.verify()).resolves.toBeUndefined();
  });

  test('SQLite: a table without the columns the outbox writes, or a file that is no database, refuses', async () => {
    const partial = new SqliteOutbox({ file: path.join(pg.dir, 'outbox.db'), table: 'team_outbox_partial' });
    files.push(partial);
    (partial as unknown as { db: { exec(sql: string): void } }).db.exec(
      'CREATE TABLE team_outbox_partial (tenant TEXT, operation_key TEXT)',
    );
    await expect(partial.verify()).rejects.toThrow(/lacks the columns tool,/);
    const garbage = path.join(pg.dir, 'not-a-database.db');
    writeFileSync(garbage, 'this is not an SQLite file, only text long enough to be read as a header');
    const broken = new SqliteOutbox({
      database: new BetterSqlite3(garbage),
    });
    files.push(broken);
    await expect(broken.verify()).rejects.toThrow(/could not be read/);
  });

  test('SQLite: neither a file nor a database (or both) refuses at construction', () => {
    expect(() => new SqliteOutbox({})).toThrow(ToolDeclarationError);
    expect(() => new SqliteOutbox({ file: 'x.db', database: {} as never })).toThrow(/exactly one/);
  });

  test('a missing table refuses with Tools.DeclarationInvalid; the created table passes', async () => {
    const pool = new Pool({ connectionString: pg.url, max: 1 });
    pools.push(pool);
    const outbox = new PgOutbox({ pool, table: 'team_outbox_missing' });
    await expect(outbox.verify()).rejects.toThrow(ToolDeclarationError);
    await expect(outbox.verify()).rejects.toThrow(/team_outbox_missing does not exist/);
    await outbox.createTable();
    await expect(outbox.verify()).resolves.toBeUndefined();
  });

  test('a table without the columns the outbox writes refuses, naming them', async () => {
    const pool = new Pool({ connectionString: pg.url, max: 1 });
    pools.push(pool);
    await pool.query('CREATE TABLE team_outbox_partial (tenant TEXT, operation_key TEXT)');
    await expect(new PgOutbox({ pool, table: 'team_outbox_partial' }).verify()).rejects.toThrow(
      /lacks the columns tool,/,
    );
  });

  test('an unreachable database refuses without repeating its URL', async () => {
    const pool = new Pool({ connectionString: 'postgres://u:hunter22@127.0.0.1:9/x', connectionTimeoutMillis: 2_000 });
    pools.push(pool);
    const err = await new PgOutbox({ pool }).verify().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolDeclarationError);
    expect(String((err as Error).message)).not.toMatch(/hunter22/);
  });
});
