/**
 * The quota store without a server: the SQLite backend keeps `QuotaWindows`' rules across connections to one file,
 * a stored state of another shape refuses (fail closed), and the environment picks the backend.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  parseQuotaState,
  QuotaStore,
  QuotaStoreConfigError,
  QuotaStoreUnavailable,
} from '../../src/stores/quota-store';
import { quotaStoreFromEnv } from '../../src/stores/quota-store-env';
import { parseQuotaUrl } from '../../src/stores/quota-store-pg';
import { SqliteQuotaBackend } from '../../src/stores/quota-store-sqlite';
import Database from 'better-sqlite3';

let dir: string;
const stores: QuotaStore[] = [];
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-quota-unit-'));
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

const open = (file = path.join(dir, 'q.db')): QuotaStore => {
  const s = new QuotaStore(new SqliteQuotaBackend(file));
  stores.push(s);
  return s;
};
const scopes = (max: number) => [{ scope: 'tenant:acme', action: 'wallet.debit', max, perMs: 60_000 }];

test('two connections to one file share the windows: 10 reservations over both, max 3, admit exactly 3', async () => {
  const [a, b] = [open(), open()];
  const decisions = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? a : b).reserve('acme', { reservationId: `r${i}`, scopes: scopes(3) }),
    ),
  );
  expect(decisions.filter((d) => d.ok)).toHaveLength(3);
  expect((await a.usage('acme')).windows).toEqual([{ scope: 'tenant:acme', action: 'wallet.debit', inWindow: 3 }]);
  // tenants do not share windows (the control: another tenant admits its own 3)
  const other = await Promise.all(
    [1, 2, 3, 4].map((i) =>
      b.reserve('globex', { reservationId: `g${i}`, scopes: scopes(3).map((s) => ({ ...s, scope: 'tenant:globex' })) }),
    ),
  );
  expect(other.filter((d) => d.ok)).toHaveLength(3);
});

test('a stored state of another shape is refused, never read as empty', () => {
  expect(() => parseQuotaState('nope')).toThrow(QuotaStoreUnavailable);
  expect(() => parseQuotaState('{}')).toThrow(/unknown shape/);
  expect(() => parseQuotaState('{"windows":{"k":[{"id":1}]},"reservations":{}}')).toThrow(/unknown shape/);
  expect(() => parseQuotaState('{"windows":{},"reservations":{"r":{"keys":"k","forgetAt":1}}}')).toThrow(
    /unknown shape/,
  );
  // control: the shape the store writes is read back
  const good = { windows: { k: [{ id: 'r', at: 1, until: 2 }] }, reservations: { r: { keys: ['k'], forgetAt: 3 } } };
  expect(parseQuotaState(JSON.stringify(good))).toEqual(good);
});

test('a store reads back the state it wrote itself without parsing it again', async () => {
  const s = open(path.join(dir, 'own.db'));
  await s.reserve('acme', { reservationId: 'w0', scopes: scopes(100) });
  const parse = jest.spyOn(JSON, 'parse');
  try {
    for (let i = 1; i <= 20; i++)
      expect((await s.reserve('acme', { reservationId: `w${i}`, scopes: scopes(100) })).ok).toBe(true);
    expect(parse).not.toHaveBeenCalled();
    // control: a state a store did not write is parsed: by the other connection (its first read), then by this
    // store, which reads the other's write (and counts its slot)
    await open(path.join(dir, 'own.db')).reserve('acme', { reservationId: 'other', scopes: scopes(100) });
    await s.reserve('acme', { reservationId: 'w21', scopes: scopes(100) });
    expect(parse).toHaveBeenCalledTimes(2);
  } finally {
    parse.mockRestore();
  }
  expect((await s.usage('acme')).windows).toEqual([{ scope: 'tenant:acme', action: 'wallet.debit', inWindow: 23 }]);
});

test('a state another connection changed is never answered from what this store wrote last', async () => {
  const file = path.join(dir, 'shared.db');
  const [a, b] = [open(file), open(file)];
  expect((await a.reserve('acme', { reservationId: 'a1', scopes: scopes(3) })).ok).toBe(true);
  expect((await a.reserve('acme', { reservationId: 'a2', scopes: scopes(3) })).ok).toBe(true);
  expect((await b.reserve('acme', { reservationId: 'b1', scopes: scopes(3) })).ok).toBe(true);
  // a's last write held 2 slots; the row holds 3: a must see b's slot and refuse
  expect(await a.reserve('acme', { reservationId: 'a3', scopes: scopes(3) })).toMatchObject({ ok: false });
  // a repeat of b's reservation through a is recognised (it reads b's ids, not its own last state)
  expect(await a.reserve('acme', { reservationId: 'b1', scopes: scopes(3) })).toEqual({ ok: true, duplicate: true });
  // control: another tenant's windows are its own
  expect(
    (await a.reserve('globex', { reservationId: 'g1', scopes: [{ ...scopes(3)[0]!, scope: 'tenant:globex' }] })).ok,
  ).toBe(true);
});

test('a row edited after this store wrote it refuses, even though the store holds what it wrote', async () => {
  const file = path.join(dir, 'edited.db');
  const s = open(file);
  expect((await s.reserve('acme', { reservationId: 'e1', scopes: scopes(3) })).ok).toBe(true); // control: it admits
  const db = new Database(file);
  db.prepare("UPDATE ledgerloop_quota SET state = '{}' WHERE tenant = 'acme'").run();
  db.close();
  await expect(s.reserve('acme', { reservationId: 'e2', scopes: scopes(3) })).rejects.toThrow(QuotaStoreUnavailable);
});

test('the environment picks PostgreSQL over SQLite, and none when neither is set', () => {
  expect(quotaStoreFromEnv({})).toBeUndefined();
  expect(quotaStoreFromEnv({ LEDGERLOOP_QUOTA_DB: path.join(dir, 'env.db') })?.kind).toBe('sqlite');
  expect(
    quotaStoreFromEnv({ LEDGERLOOP_QUOTA_DB: path.join(dir, 'env.db'), LEDGERLOOP_QUOTA_URL: 'postgres://u@h:5432/db' })
      ?.kind,
  ).toBe('postgres');
});

test('a quota URL that is not postgres:// is refused without repeating the password', () => {
  expect(() => parseQuotaUrl('mysql://u:s3cret@h/db')).toThrow(QuotaStoreConfigError);
  expect(() => parseQuotaUrl('mysql://u:s3cret@h/db')).not.toThrow(/s3cret/);
  expect(() => parseQuotaUrl('postgres://u:s3cret@h:5432/')).toThrow(/names no database/);
  expect(parseQuotaUrl('postgres://u:s3cret@h:5432/db')).toBe('postgres://u:s3cret@h:5432/db');
});
