/**
 * Every read is scoped: a service's record reads answer on the public listener only with a read capability for
 * exactly that path and tenant, once; an operator reads on the admin listener. Each refusal has its control (a
 * valid read capability for the right tenant is served), on the real service definitions mounted in process.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import BetterSqlite3 from 'better-sqlite3';
import { mountService, type ServiceDefinition } from '../../services/service-host';
import { walletDefinition } from '../../services/wallet/wallet-service';
import { ordersDefinition } from '../../services/orders/orders-service';
import { devCapabilitySigner } from '../../services/dev-signer';
import { LOOKUP_ARGUMENTS_HASH, READ_ARGUMENTS_HASH } from '../../src/downstream/protocol';
import { AdminClient } from '../../services/admin-client';
import { generateCapabilityTrust, keySetFromJwks } from '../../src/capability/capability-keys';

const trust = generateCapabilityTrust();
const servers: http.Server[] = [];
const dbs: BetterSqlite3.Database[] = [];

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A service mounted with the trust's keys: its public URL, its admin router's URL, a read signer. */
async function mount(definition: ServiceDefinition) {
  const db = new BetterSqlite3(':memory:');
  dbs.push(db);
  const mounted = mountService(definition, {
    db,
    capabilityKeys: keySetFromJwks(JSON.stringify(trust.jwks)),
    admin: true,
  });
  const url = await serve((req, res) => void mounted.handle(req, res));
  const admin = await serve((req, res) => void mounted.adminRouter!.handle(req, res));
  const sign = devCapabilitySigner(trust.dispatch, definition.name);
  const readCap = (path: string, tenant: string, kind: 'read' | 'lookup' = 'read') =>
    sign({
      kind,
      path,
      key: path,
      argumentsHash: kind === 'read' ? READ_ARGUMENTS_HASH : LOOKUP_ARGUMENTS_HASH,
      tenant,
    })!;
  const get = async (path: string, capability?: string, base = url) => {
    const res = await fetch(`${base}${path}`, { headers: capability ? { 'x-capability': capability } : {} });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const seed = (path: string, body: unknown) =>
    fetch(`${admin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  return { url, admin, readCap, get, seed, mounted };
}

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  for (const db of dbs) db.close();
});

describe("the wallet: GET /v1/accounts/globex/acct_1 is globex's balance", () => {
  let w: Awaited<ReturnType<typeof mount>>;
  const GLOBEX = '/v1/accounts/globex/acct_1';
  beforeAll(async () => {
    w = await mount(walletDefinition);
    await w.seed('/admin/accounts', { tenant: 'globex', account: 'acct_1', balanceMinor: 4_200, currency: 'EUR' });
    await w.seed('/admin/accounts', { tenant: 'globex', account: 'acct_2', balanceMinor: 1, currency: 'EUR' });
  });

  test.each([
    ['no capability', () => undefined],
    ["acme's read capability for acme's own account", () => w.readCap('/v1/accounts/acme/acct_1', 'acme')],
    ["a read capability for globex's path, naming tenant acme", () => w.readCap(GLOBEX, 'acme')],
    ["globex's read capability for another account", () => w.readCap('/v1/accounts/globex/acct_2', 'globex')],
    ['a lookup capability (another scope) for the path', () => w.readCap(GLOBEX, 'globex', 'lookup')],
  ])('refused 403 Capability.Invalid: %s', async (_name, cap) => {
    const got = await w.get(GLOBEX, cap());
    expect(got).toMatchObject({ status: 403, body: { error: 'Capability.Invalid' } });
    expect(JSON.stringify(got.body)).not.toContain('4200');
  });

  test("control: globex's read capability for exactly that account is served, once", async () => {
    const cap = w.readCap(GLOBEX, 'globex');
    expect(await w.get(GLOBEX, cap)).toMatchObject({
      status: 200,
      body: { tenant: 'globex', account: 'acct_1', balance: { minor: 4_200, currency: 'EUR' } },
    });
    expect(await w.get(GLOBEX, cap)).toMatchObject({ status: 403, body: { error: 'Capability.Invalid' } });
  });

  test('an operator reads on the admin listener; the public listener has no such route', async () => {
    expect(await w.get(`/admin${GLOBEX}`, undefined, w.admin)).toMatchObject({ status: 200 });
    expect((await w.get(`/admin${GLOBEX}`)).status).toBe(404);
  });

  test('AdminClient reads with its signer, else through the admin listener, else is refused', async () => {
    const signed = new AdminClient({ baseUrl: w.url, signer: devCapabilitySigner(trust.dispatch, 'wallet') });
    expect(await signed.balance('globex', 'acct_1')).toEqual({ minor: 4_200, currency: 'EUR' });
    const operator = new AdminClient({ baseUrl: w.url, admin: { baseUrl: w.admin, token: 'unused' } });
    expect(await operator.balance('globex', 'acct_1')).toEqual({ minor: 4_200, currency: 'EUR' });
    await expect(new AdminClient({ baseUrl: w.url }).balance('globex', 'acct_1')).rejects.toThrow(/403/);
  });
});

test("the orders service: GET /v1/orders/globex/o-77 (a customer's email) needs globex's read capability", async () => {
  const o = await mount(ordersDefinition);
  await o.seed('/admin/orders', { tenant: 'globex', orderId: 'o-77', customerEmail: 'ceo@globex.example' });
  const path = '/v1/orders/globex/o-77';
  for (const cap of [undefined, o.readCap(path, 'acme'), o.readCap('/v1/orders/acme/o-77', 'acme')]) {
    const got = await o.get(path, cap);
    expect(got.status).toBe(403);
    expect(JSON.stringify(got.body)).not.toContain('ceo@globex.example');
  }
  expect(await o.get(path, o.readCap(path, 'globex'))).toMatchObject({
    status: 200,
    body: { customerEmail: 'ceo@globex.example' },
  });
});

test('a read route that names no tenant is refused at mount (Service.ReadUnscoped)', () => {
  const db = new BetterSqlite3(':memory:');
  dbs.push(db);
  const unscoped: ServiceDefinition = {
    name: 'leaky',
    migrate: () => undefined,
    reads: { '/v1/everything/:id': { get: () => ({}), notFound: 'none' } },
  };
  expect(() => mountService(unscoped, { db, capabilityKeys: keySetFromJwks(JSON.stringify(trust.jwks)) })).toThrow(
    /Service\.ReadUnscoped/,
  );
});
