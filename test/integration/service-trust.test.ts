/**
 * Fail-closed services (issue #12, item 3), against real wallet processes over raw HTTP: no start without keys,
 * admin routes only on the loopback admin listener and only with its token, lookup and seal only with a
 * capability for that key and tenant (seal only by POST), records scoped by tenant, refusals counted not stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { hashCanonical } from '../../src/domain/canonical';
import {
  HEADER_ARGS_HASH,
  HEADER_FENCE,
  HEADER_INTENT_AT,
  HEADER_KEY,
  LOOKUP_ARGUMENTS_HASH,
  lookupCapabilityScope,
} from '../../src/downstream/protocol';
import { CAPABILITY_HEADER, signCapability, type CapabilityClaims } from '../../src/capability/capability';
import { generateCapabilityTrust, KEY_SET_ENV } from '../../src/capability/capability-keys';
import { spawnService, type SpawnedService } from '../../services/spawn';

jest.setTimeout(60_000);

const TRUST = generateCapabilityTrust();
const ENV = { ...TRUST.serviceEnv };
let dir: string;
let wallet: SpawnedService;
let n = 0;

type Grant = Omit<CapabilityClaims, 'v'>;

function claims(over: Partial<Grant>): Grant {
  return {
    operationKey: 'k',
    keyMode: 'exact',
    argumentsHash: LOOKUP_ARGUMENTS_HASH,
    tenant: 'acme',
    principalId: 'user:test',
    scope: lookupCapabilityScope('wallet', false),
    action: 'lookup',
    resource: 'wallet',
    policyVersion: 'test/1',
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
    ...over,
  };
}

/** A capability from the dispatch key the wallet trusts, for the wallet (a fresh jti each time). */
const capFor = (over: Partial<Grant>): string =>
  signCapability(claims(over), TRUST.dispatch, { audience: 'wallet', nowMs: Date.now() }).token;

const admin = (p: string, init: RequestInit = {}) =>
  fetch(`${wallet.adminUrl}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${wallet.adminToken}`, 'content-type': 'application/json', ...init.headers },
  });

async function seed(tenant: string, account: string): Promise<void> {
  const r = await admin('/admin/accounts', {
    method: 'POST',
    body: JSON.stringify({ tenant, account, balanceMinor: 10_000, currency: 'EUR' }),
  });
  expect(r.status).toBe(200);
}

async function debit(tenant: string, account: string, key: string, signed = true): Promise<Response> {
  const body = { tenant, account, amount: { minor: 100, currency: 'EUR' } };
  const argumentsHash = hashCanonical(body);
  const cap = capFor({ operationKey: key, argumentsHash, tenant, scope: 'wallet.charge', action: 'wallet.debit' });
  return fetch(`${wallet.url}/v1/debits`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [HEADER_KEY]: key,
      [HEADER_ARGS_HASH]: argumentsHash,
      [HEADER_FENCE]: '0',
      [HEADER_INTENT_AT]: new Date().toISOString(),
      ...(signed ? { [CAPABILITY_HEADER]: cap } : {}),
    },
    body: JSON.stringify(body),
  });
}

const lookup = (key: string, tenant: string, cap?: string) =>
  fetch(`${wallet.url}/v1/operations/${encodeURIComponent(key)}?tenant=${tenant}`, {
    headers: cap ? { [CAPABILITY_HEADER]: cap } : {},
  });

const requestRows = (): number => {
  const db = new BetterSqlite3(path.join(dir, 'wallet.db'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM idem_requests').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-trust-'));
  wallet = await spawnService('wallet', { dbPath: path.join(dir, 'wallet.db'), env: ENV });
});

afterAll(async () => {
  await wallet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('fail-closed services', () => {
  it('a service without its verification key refuses to start (Service.KeysMissing), unless --insecure-dev', async () => {
    const refused = spawnService('wallet', { dbPath: path.join(dir, 'nokey.db'), env: { [KEY_SET_ENV]: '' } });
    await expect(refused).rejects.toThrow(/Service\.KeysMissing/);
    const dev = await spawnService('wallet', {
      dbPath: path.join(dir, 'dev.db'),
      env: { [KEY_SET_ENV]: '' },
      extraArgs: ['--insecure-dev'],
    });
    await dev.stop();
  });

  it('admin routes are not on the public listener', async () => {
    const r = await fetch(`${wallet.url}/admin/stats?key=x`);
    expect(r.status).toBe(404);
    const f = await fetch(`${wallet.url}/admin/faults`, {
      method: 'POST',
      body: '{"at":"before_commit","do":"error_5xx"}',
    });
    expect(f.status).toBe(404);
  });

  it('the admin listener is on loopback and refuses a request without (or with a wrong) token: 401 Admin.Unauthorized', async () => {
    expect(wallet.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const none = await fetch(`${wallet.adminUrl}/admin/stats?key=x`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'Admin.Unauthorized' });
    const wrong = await fetch(`${wallet.adminUrl}/admin/stats?key=x`, {
      headers: { authorization: `Bearer ${'x'.repeat(43)}` },
    });
    expect(wrong.status).toBe(401);
    expect((await admin('/admin/stats?key=x')).status).toBe(200);
  });

  it('seal by GET is refused and seals nothing; seal needs a POST with a seal capability', async () => {
    n += 1;
    const key = `seal-${n}`;
    const cap = capFor({ operationKey: key, scope: lookupCapabilityScope('wallet', true) });
    const viaGet = await fetch(`${wallet.url}/v1/operations/${key}?seal=true&tenant=acme`, {
      headers: { [CAPABILITY_HEADER]: cap },
    });
    expect(viaGet.status).toBe(405);
    expect(await viaGet.json()).toMatchObject({ error: 'Lookup.SealRequiresPost' });
    const lookCap = capFor({ operationKey: key });
    expect(await (await lookup(key, 'acme', lookCap)).json()).toMatchObject({ error: 'not_found', sealed: false });
    const noCap = await fetch(`${wallet.url}/v1/operations/${key}/seal`, {
      method: 'POST',
      body: JSON.stringify({ tenant: 'acme' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(noCap.status).toBe(403);
    const sealed = await fetch(`${wallet.url}/v1/operations/${key}/seal`, {
      method: 'POST',
      body: JSON.stringify({ tenant: 'acme' }),
      headers: { 'content-type': 'application/json', [CAPABILITY_HEADER]: cap },
    });
    expect(await sealed.json()).toMatchObject({ error: 'not_found', sealed: true });
  });

  it('a lookup without a capability (or with one for another key) is refused: 403 Capability.Invalid', async () => {
    n += 1;
    const key = `look-${n}`;
    await seed('acme', `a${n}`);
    expect((await debit('acme', `a${n}`, key)).status).toBe(201);
    const none = await lookup(key, 'acme');
    expect(none.status).toBe(403);
    expect(await none.json()).toMatchObject({ error: 'Capability.Invalid' });
    const other = await lookup(key, 'acme', capFor({ operationKey: 'another-key' }));
    expect(other.status).toBe(403);
    const ok = await lookup(key, 'acme', capFor({ operationKey: key }));
    expect(ok.status).toBe(200);
  });

  it("records are scoped by tenant: a lookup for globex never returns acme's record under the same key", async () => {
    n += 1;
    const key = `shared-${n}`;
    await seed('acme', `a${n}`);
    await seed('globex', `g${n}`);
    expect((await debit('acme', `a${n}`, key)).status).toBe(201);
    const asGlobex = await lookup(key, 'globex', capFor({ operationKey: key, tenant: 'globex' }));
    expect(asGlobex.status).toBe(404);
    // A capability for acme presented with tenant=globex is refused, not answered.
    const mixed = await lookup(key, 'globex', capFor({ operationKey: key, tenant: 'acme' }));
    expect(mixed.status).toBe(403);
    // The same key under another tenant is another record: globex's debit under it is its own first effect.
    expect((await debit('globex', `g${n}`, key)).status).toBe(201);
    const stats = (await (await admin(`/admin/stats?key=${key}`)).json()) as { businessEffectCount: number };
    expect(stats.businessEffectCount).toBe(2);
  });

  it('refused requests are counted by code, not stored: 40 unsigned debits add no request rows', async () => {
    const before = requestRows();
    for (let i = 0; i < 40; i++) {
      const r = await debit('acme', 'nobody', `refused-${i}`, false);
      expect(r.status).toBe(403);
    }
    expect(requestRows()).toBe(before);
    const counters = (await (await admin('/admin/refusals')).json()) as { byCode: Record<string, number> };
    expect(counters.byCode['Capability.Invalid']).toBeGreaterThanOrEqual(40);
  });
});
