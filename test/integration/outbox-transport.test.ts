/**
 * The fenced local outbox (src/downstream/outbox) in front of a vendor API that takes no fence: the vendor payments
 * server (services/vendor-payments, its own process and SQLite storage) behind the `payments_charge` HTTP tool, and
 * the outbox table on a private real PostgreSQL. Two workers are two pools and two transports over the same table
 * and the same vendor. Every send and every charge is counted in the vendor's own storage.
 */
import { Pool } from 'pg';
import type { HttpTransport } from '../../src/domain/transport';
import { ToolDeclarationError } from '../../src/domain/tool-check';
import { HttpApiTransport } from '../../src/downstream/http-transport';
import { OutboxTransport } from '../../src/downstream/outbox/outbox-transport';
import { PgOutbox } from '../../src/downstream/outbox/pg-outbox';
import type { AttemptCall, LookupCall } from '../../src/downstream/transport';
import { attemptCall } from '../helpers/attempt-call';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { spawnVendor, VENDOR_API_KEY, type Vendor } from '../helpers/vendor';
import { paymentsCharge } from '../support/transports/tools';

jest.setTimeout(120_000);

let pg: TestPostgres;
let vendor: Vendor;
const pools: Pool[] = [];

/** One worker: its own pool on the team's database, its own HTTP transport to the vendor, behind the outbox. */
function worker(): { outbox: PgOutbox; direct: HttpApiTransport; transport: OutboxTransport } {
  const pool = new Pool({ connectionString: pg.url, max: 2 });
  pools.push(pool);
  const outbox = new PgOutbox({ pool });
  const direct = new HttpApiTransport(paymentsCharge.transport as HttpTransport, {
    baseUrl: vendor.url,
    secrets: { PAYMENTS_API_KEY: VENDOR_API_KEY },
  });
  return { outbox, direct, transport: new OutboxTransport(outbox, direct) };
}

beforeAll(async () => {
  pg = await startTestPostgres('outbox-transport');
  vendor = await spawnVendor(pg.dir);
  await worker().outbox.createTable();
});
afterEach(async () => {
  await vendor.admin('DELETE', '/admin/faults');
});
afterAll(async () => {
  await vendor?.stop();
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
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

describe('the fenced local outbox', () => {
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
