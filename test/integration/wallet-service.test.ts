/**
 * The wallet as a real child process (spawned with `spawnService`) over HTTP and SQLite: the idempotency
 * contract, reconciliation by key, retention, and the injected faults. No Temporal needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DownstreamClient } from '../../src/downstream/client';
import type { AdminClient } from '../../services/admin-client';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { hashCanonical } from '../../src/domain/canonical';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { generateCapabilityTrust } from '../../src/capability/capability-keys';
import { devCapabilitySigner } from '../../services/dev-signer';
import { walletDebit, walletRefund } from '../../src/tools/wallet.tool';
import { intentNow, waitFor } from '../helpers/services';

jest.setTimeout(30_000);

const TENANT = 't1';
/** The wallet verifies capabilities (it refuses to start without keys); the test's clients sign with the dispatch key. */
const TRUST = generateCapabilityTrust();
const CAP_KEY = TRUST.dispatch;
const ENV = { ...TRUST.serviceEnv };
let dir: string;
let wallet: SpawnedService;
let client: AdminClient;
let counter = 0;

/** A fresh key, account and debit body per test, the account seeded with `balance` EUR minor units. */
async function fixture(balance = 10_000) {
  counter += 1;
  const key = `op-${counter}-${Date.now()}`;
  const account = `acct_${counter}`;
  await client.seedAccount({ tenant: TENANT, account, balanceMinor: balance, currency: 'EUR' });
  const debit = (minor: number) => ({ tenant: TENANT, account, amount: { minor, currency: 'EUR' } });
  return { key, account, debit };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-wallet-'));
  wallet = await spawnService('wallet', { env: ENV, dbPath: path.join(dir, 'wallet.db'), port: 0 });
  client = spawnedClient(wallet, { capabilityKey: CAP_KEY, timeoutMs: 5_000 });
});

afterAll(async () => {
  await wallet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await client.clearFaults();
});

describe('wallet service (real process)', () => {
  it('starts as a separate process and declares a 24 h retention by default', async () => {
    expect(wallet.pid).not.toBe(process.pid);
    expect(wallet.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await client.contract()).toEqual({ service: 'wallet', idempotencyRetentionMs: 86_400_000 });
  });

  it('a debit succeeds, returns a receipt and the balance after, and counts one dispatch and one effect', async () => {
    const { key, account, debit } = await fixture(10_000);
    const out = await client.send('/v1/debits', debit(2_500), { intentAt: intentNow(), key });
    expect(out).toMatchObject({ kind: 'ok', status: 201, replayed: false });
    if (out.kind !== 'ok') throw new Error('unreachable');
    expect(out.body).toMatchObject({ receipt: expect.stringMatching(/^wd_/), account, amount: { minor: 2_500 } });
    expect(out.body).toMatchObject({ balanceAfter: { minor: 7_500, currency: 'EUR' } });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 7_500, currency: 'EUR' });
    expect(await client.stats(key)).toEqual({ key, prefix: false, dispatchCount: 1, businessEffectCount: 1 });
  });

  it('the same key with the same arguments replays the retained result without a second effect', async () => {
    const { key, account, debit } = await fixture(10_000);
    const first = await client.send('/v1/debits', debit(1_000), { intentAt: intentNow(), key });
    const second = await client.send('/v1/debits', debit(1_000), { intentAt: intentNow(), key });
    expect(first).toMatchObject({ kind: 'ok', replayed: false });
    expect(second).toMatchObject({ kind: 'ok', replayed: true });
    if (first.kind !== 'ok' || second.kind !== 'ok') throw new Error('unreachable');
    expect(second.body).toEqual(first.body);
    expect(await client.balance(TENANT, account)).toEqual({ minor: 9_000, currency: 'EUR' });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });

  it('the same key with other arguments is refused with ArgumentsMismatch and commits nothing', async () => {
    const { key, account, debit } = await fixture(10_000);
    await client.send('/v1/debits', debit(1_000), { intentAt: intentNow(), key });
    const other = await client.send('/v1/debits', debit(1_001), { intentAt: intentNow(), key });
    expect(other).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.ArgumentsMismatch });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 9_000, currency: 'EUR' });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });

  it('a dropped response after commit leaves one effect that lookup by key finds', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'after_commit', do: 'drop_response' });
    const lost = await client.send('/v1/debits', debit(300), { intentAt: intentNow(), key });
    expect(lost.kind).toBe('response_lost');
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 1, businessEffectCount: 1 });
    const found = await client.lookup(key, { tenant: TENANT });
    expect(found).toMatchObject({
      kind: 'found',
      record: { status: 'completed', receipt: expect.stringMatching(/^wd_/) },
    });
    if (found.kind !== 'found') throw new Error('unreachable');
    const retry = await client.send('/v1/debits', debit(300), { intentAt: intentNow(), key });
    expect(retry).toMatchObject({ kind: 'ok', replayed: true, body: { receipt: found.record.receipt } });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });

  it('a dropped response before commit leaves no effect, and lookup says not found', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'before_commit', do: 'drop_response' });
    expect((await client.send('/v1/debits', debit(300), { intentAt: intentNow(), key })).kind).toBe('response_lost');
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 1, businessEffectCount: 0 });
  });

  it('a key sealed by lookup refuses a late request with KeySealed and no effect', async () => {
    const { key, debit } = await fixture(10_000);
    expect(await client.lookup(key, { tenant: TENANT, seal: true })).toEqual({ kind: 'not_found', sealed: true });
    const late = await client.send('/v1/debits', debit(300), { intentAt: intentNow(), key });
    expect(late).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.KeySealed });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: true });
    expect(await client.stats(key)).toMatchObject({ businessEffectCount: 0 });
  });

  it('an injected 5xx before commit is unavailable, and the same key then succeeds exactly once', async () => {
    const { key, account, debit } = await fixture(10_000);
    await client.armFault({ at: 'before_commit', do: 'error_5xx' });
    expect(await client.send('/v1/debits', debit(400), { intentAt: intentNow(), key })).toMatchObject({
      kind: 'unavailable',
    });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
    expect(await client.send('/v1/debits', debit(400), { intentAt: intentNow(), key })).toMatchObject({
      kind: 'ok',
      replayed: false,
    });
    expect(await client.send('/v1/debits', debit(400), { intentAt: intentNow(), key })).toMatchObject({
      kind: 'ok',
      replayed: true,
    });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 9_600, currency: 'EUR' });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 3, businessEffectCount: 1 });
  });

  it('an injected 5xx after commit is an ambiguous response, with the effect committed', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'after_commit', do: 'error_5xx' });
    expect(await client.send('/v1/debits', debit(400), { intentAt: intentNow(), key })).toMatchObject({
      kind: 'response_lost',
    });
    expect(await client.stats(key)).toMatchObject({ businessEffectCount: 1 });
  });

  it('a delay before commit holds the key in progress for a concurrent retry, then commits once', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'before_commit', do: 'delay', ms: 600 });
    const started = Date.now();
    const slow = client.send('/v1/debits', debit(500), { intentAt: intentNow(), key });
    await waitFor(async () => (await client.lookup(key, { tenant: TENANT })).kind === 'found');
    expect(await client.lookup(key, { tenant: TENANT })).toMatchObject({
      kind: 'found',
      record: { status: 'in_progress' },
    });
    expect(await client.send('/v1/debits', debit(500), { intentAt: intentNow(), key })).toEqual({
      kind: 'in_progress',
    });
    expect(await slow).toMatchObject({ kind: 'ok', replayed: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });

  it('a client timeout during a delay after commit is response_lost while the effect is committed', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'after_commit', do: 'delay', ms: 1_500 });
    const impatient = spawnedClient(wallet, { capabilityKey: CAP_KEY, timeoutMs: 300 });
    expect(await impatient.send('/v1/debits', debit(500), { intentAt: intentNow(), key })).toMatchObject({
      kind: 'response_lost',
    });
    expect(await client.lookup(key, { tenant: TENANT })).toMatchObject({
      kind: 'found',
      record: { status: 'completed' },
    });
  });

  it('cancelling the caller does not stop the remote effect: response_lost, then the debit commits', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'before_commit', do: 'delay', ms: 500 });
    const controller = new AbortController();
    const pending = client.send('/v1/debits', debit(500), { intentAt: intentNow(), key, signal: controller.signal });
    await waitFor(async () => (await client.lookup(key, { tenant: TENANT })).kind === 'found'); // received and in progress
    controller.abort(new Error('activity cancelled'));
    expect(await pending).toMatchObject({
      kind: 'response_lost',
      reason: expect.stringContaining('activity cancelled'),
    });
    await waitFor(async () => (await client.stats(key)).businessEffectCount === 1);
    expect(await client.lookup(key, { tenant: TENANT })).toMatchObject({
      kind: 'found',
      record: { status: 'completed' },
    });
  });

  it('a fault rule applies to its n-th matching request only', async () => {
    const { key, debit } = await fixture(10_000);
    await client.armFault({ at: 'before_commit', do: 'error_5xx', occurrence: 2, path: '/v1/debits' });
    expect(await client.send('/v1/debits', debit(1), { intentAt: intentNow(), key: `${key}-a` })).toMatchObject({
      kind: 'ok',
    });
    expect(await client.send('/v1/debits', debit(1), { intentAt: intentNow(), key: `${key}-b` })).toMatchObject({
      kind: 'unavailable',
    });
    expect(await client.send('/v1/debits', debit(1), { intentAt: intentNow(), key: `${key}-c` })).toMatchObject({
      kind: 'ok',
    });
    expect(await client.stats(key, { prefix: true })).toMatchObject({ dispatchCount: 3, businessEffectCount: 2 });
  });

  it('insufficient funds is rejected with its reason, retained as failed, and moves no money', async () => {
    const { key, account, debit } = await fixture(100);
    const first = await client.send('/v1/debits', debit(101), { intentAt: intentNow(), key });
    expect(first).toMatchObject({
      kind: 'rejected',
      status: 422,
      code: 'Downstream.Rejected',
      reason: 'Wallet.InsufficientFunds',
    });
    await client.seedAccount({ tenant: TENANT, account, balanceMinor: 1_000, currency: 'EUR' });
    const retry = await client.send('/v1/debits', debit(101), { intentAt: intentNow(), key });
    expect(retry).toMatchObject({ kind: 'rejected', status: 422, reason: 'Wallet.InsufficientFunds' });
    expect(await client.lookup(key, { tenant: TENANT })).toMatchObject({ kind: 'found', record: { status: 'failed' } });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 1_000, currency: 'EUR' });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 0 });
  });

  it('an unknown account and a currency mismatch are business rejections', async () => {
    const { key, debit } = await fixture(100);
    const unknown = await client.send(
      '/v1/debits',
      { ...debit(1), account: 'acct_nobody' },
      { intentAt: intentNow(), key: `${key}-u` },
    );
    expect(unknown).toMatchObject({ kind: 'rejected', status: 422, reason: 'Wallet.UnknownAccount' });
    const usd = await client.send(
      '/v1/debits',
      { ...debit(1), amount: { minor: 1, currency: 'USD' } },
      { intentAt: intentNow(), key: `${key}-c` },
    );
    expect(usd).toMatchObject({ kind: 'rejected', status: 422, reason: 'Wallet.CurrencyMismatch' });
  });

  it('a refund credits back at most the debit minus earlier refunds', async () => {
    const { key, account, debit } = await fixture(1_000);
    const charged = await client.send('/v1/debits', debit(600), { intentAt: intentNow(), key });
    if (charged.kind !== 'ok') throw new Error(`debit failed: ${JSON.stringify(charged)}`);
    const debitReceipt = (charged.body as { receipt: string }).receipt;
    const refund = (minor: number) => ({ tenant: TENANT, account, amount: { minor, currency: 'EUR' }, debitReceipt });
    expect(await client.send('/v1/refunds', refund(400), { intentAt: intentNow(), key: `${key}-r1` })).toMatchObject({
      kind: 'ok',
      body: { balanceAfter: { minor: 800 }, refundableAfter: { minor: 200 } },
    });
    expect(await client.send('/v1/refunds', refund(201), { intentAt: intentNow(), key: `${key}-r2` })).toMatchObject({
      kind: 'rejected',
      status: 422,
      reason: 'Wallet.RefundExceedsDebit',
    });
    expect(await client.send('/v1/refunds', refund(200), { intentAt: intentNow(), key: `${key}-r3` })).toMatchObject({
      kind: 'ok',
    });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 1_000, currency: 'EUR' });
  });

  it('a wrong X-Arguments-Hash is refused with ArgumentsHashInvalid and commits nothing', async () => {
    const { key, debit } = await fixture(1_000);
    const out = await client.send('/v1/debits', debit(5), {
      intentAt: intentNow(),
      key,
      argumentsHash: 'f'.repeat(64),
    });
    expect(out).toMatchObject({ kind: 'rejected', status: 400, code: DownstreamErrorCode.ArgumentsHashInvalid });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
    // Refused before the rules: counted by code, not logged under the key.
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 0, businessEffectCount: 0 });
    expect((await client.refusals()).byCode[DownstreamErrorCode.ArgumentsHashInvalid]).toBeGreaterThanOrEqual(1);
  });

  it('a fence lower than the accepted one is refused as stale', async () => {
    const { key, debit } = await fixture(1_000);
    expect(await client.send('/v1/debits', debit(5), { intentAt: intentNow(), key, fence: 3 })).toMatchObject({
      kind: 'ok',
    });
    expect(await client.send('/v1/debits', debit(5), { intentAt: intentNow(), key, fence: 2 })).toMatchObject({
      kind: 'rejected',
      code: DownstreamErrorCode.StaleFence,
    });
    expect(await client.send('/v1/debits', debit(5), { intentAt: intentNow(), key, fence: 4 })).toMatchObject({
      kind: 'ok',
      replayed: true,
    });
    expect(await client.lookup(key, { tenant: TENANT })).toMatchObject({ kind: 'found', record: { fence: 4 } });
  });

  it('an oversized or invalid body is refused before any idempotency record exists', async () => {
    const { key, debit } = await fixture(1_000);
    const huge = { ...debit(5), memo: 'x'.repeat(70 * 1024) };
    expect(await client.send('/v1/debits', huge, { intentAt: intentNow(), key })).toMatchObject({
      kind: 'rejected',
      status: 413,
    });
    const negative = await client.send('/v1/debits', debit(-5), { intentAt: intentNow(), key });
    expect(negative).toMatchObject({ kind: 'rejected', status: 400, code: DownstreamErrorCode.BadRequest });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
  });

  it('a closed port is unavailable (definitely not applied) and lookup says unreachable', async () => {
    const port = await freePort();
    const dead = new DownstreamClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000 });
    expect(await dead.send('/v1/debits', { a: 1 }, { intentAt: intentNow(), key: 'k' })).toMatchObject({
      kind: 'unavailable',
    });
    expect(await dead.lookup('k', { tenant: TENANT })).toMatchObject({ kind: 'unreachable' });
  });
});

/** A raw POST with exactly the given headers (the client always sends `X-Intent-At`). */
async function rawDebit(body: unknown, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  // A valid capability for exactly this request, so that only the header under test can be refused.
  const capability = devCapabilitySigner(
    CAP_KEY,
    'wallet',
  )({
    kind: 'mutation',
    path: '/v1/debits',
    key: headers['idempotency-key'] ?? '',
    argumentsHash: hashCanonical(body),
    tenant: TENANT,
  });
  const response = await fetch(`${wallet.url}/v1/debits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-capability': capability ?? '', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('wallet service intent time (X-Intent-At)', () => {
  it('refuses a mutating request without an intent time with 400 IntentTimeMissing and commits nothing', async () => {
    const { key, debit } = await fixture(1_000);
    const body = debit(10);
    const headers = { 'idempotency-key': key, 'x-arguments-hash': hashCanonical(body), 'x-fence': '1' };
    const out = await rawDebit(body, headers);
    expect(out).toEqual({
      status: 400,
      body: expect.objectContaining({ error: DownstreamErrorCode.IntentTimeMissing, committed: false }),
    });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 0, businessEffectCount: 0 });
    expect((await client.refusals()).byCode[DownstreamErrorCode.IntentTimeMissing]).toBeGreaterThanOrEqual(1);
  });

  it('refuses an unparseable or future intent time with 400 IntentTimeMissing', async () => {
    const { key, debit } = await fixture(1_000);
    const body = debit(10);
    const base = { 'idempotency-key': key, 'x-arguments-hash': hashCanonical(body) };
    for (const at of ['yesterday', '2026-13-45T99:00:00Z', '', new Date(Date.now() + 3_600_000).toISOString()]) {
      const out = await rawDebit(body, { ...base, 'x-intent-at': at });
      expect(out).toMatchObject({ status: 400, body: { error: DownstreamErrorCode.IntentTimeMissing } });
    }
    expect(await client.stats(key)).toMatchObject({ businessEffectCount: 0 });
  });

  it('refuses a request whose intent is older than the retention window with 409 IntentExpired', async () => {
    const { key, debit } = await fixture(1_000);
    const old = new Date(Date.now() - 86_400_000 - 60_000).toISOString();
    const out = await client.send('/v1/debits', debit(10), { key, intentAt: old });
    expect(out).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.IntentExpired });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
    expect(await client.stats(key)).toMatchObject({ dispatchCount: 0, businessEffectCount: 0 });
    expect((await client.refusals()).byCode[DownstreamErrorCode.IntentExpired]).toBeGreaterThanOrEqual(1);
  });

  it('admits a request whose intent is inside the retention window', async () => {
    const { key, debit } = await fixture(1_000);
    const recent = new Date(Date.now() - 3_600_000).toISOString();
    expect(await client.send('/v1/debits', debit(10), { key, intentAt: recent })).toMatchObject({ kind: 'ok' });
  });
});

describe('wallet service retention and restarts', () => {
  const body = { tenant: TENANT, account: 'acct_r', amount: { minor: 10, currency: 'EUR' } };

  it('prunes a key after the declared retention window, after which lookup finds only the effect log receipt', async () => {
    const short = await spawnService('wallet', { env: ENV, dbPath: path.join(dir, 'short.db'), retentionMs: 750 });
    try {
      const c = spawnedClient(short, { capabilityKey: CAP_KEY });
      expect(await c.contract()).toEqual({ service: 'wallet', idempotencyRetentionMs: 750 });
      await c.seedAccount({ tenant: TENANT, account: 'acct_r', balanceMinor: 1_000, currency: 'EUR' });
      const sentAt = new Date().toISOString();
      expect(await c.send('/v1/debits', body, { key: 'short-1', intentAt: sentAt })).toMatchObject({ kind: 'ok' });
      expect(await c.lookup('short-1', { tenant: TENANT })).toMatchObject({ kind: 'found' });
      // A lookup prunes what is past its retention: poll until the record is gone (750 ms after the debit).
      await waitFor(async () => {
        const seen = await c.lookup('short-1', { tenant: TENANT });
        return seen.kind === 'found' && seen.record.pruned === true;
      });
      // The record is pruned; the effect log still answers by key (receipt only), so reconciliation is never fooled.
      expect(await c.lookup('short-1', { tenant: TENANT })).toMatchObject({
        kind: 'found',
        record: { status: 'completed', pruned: true },
      });
      // The same intent sent again now carries its recorded time: older than the retention, it is refused
      // (409 IntentExpired) instead of being charged a second time under the freed key.
      expect(await c.send('/v1/debits', body, { key: 'short-1', intentAt: sentAt })).toMatchObject({
        kind: 'rejected',
        status: 409,
        code: DownstreamErrorCode.IntentExpired,
      });
      expect(await c.stats('short-1')).toMatchObject({ dispatchCount: 1, businessEffectCount: 1 });
      expect(await c.refusals()).toMatchObject({ mutations: 1, byCode: { [DownstreamErrorCode.IntentExpired]: 1 } });
      expect(await c.balance(TENANT, 'acct_r')).toEqual({ minor: 990, currency: 'EUR' });
    } finally {
      await short.stop();
    }
  });

  it('a seal outlives the retention window: a lookup still answers sealed and a late request cannot commit', async () => {
    const short = await spawnService('wallet', { env: ENV, dbPath: path.join(dir, 'seal.db'), retentionMs: 300 });
    try {
      const c = spawnedClient(short, { capabilityKey: CAP_KEY });
      await c.seedAccount({ tenant: TENANT, account: 'acct_r', balanceMinor: 1_000, currency: 'EUR' });
      expect(await c.lookup('sealed-1', { tenant: TENANT, seal: true })).toEqual({ kind: 'not_found', sealed: true });
      // The witness: an ordinary record written after the seal. Once the service has pruned it, the retention
      // window has passed for the seal too, on the service's own clock.
      expect(await c.send('/v1/debits', body, { key: 'witness-1', intentAt: intentNow() })).toMatchObject({
        kind: 'ok',
      });
      await waitFor(async () => {
        const seen = await c.lookup('witness-1', { tenant: TENANT });
        return seen.kind === 'found' && seen.record.pruned === true;
      });
      expect(await c.lookup('sealed-1', { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: true });
      const late = await c.send('/v1/debits', body, { key: 'sealed-1', intentAt: new Date().toISOString() });
      expect(late).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.KeySealed });
      expect(await c.stats('sealed-1')).toMatchObject({ businessEffectCount: 0 });
    } finally {
      await short.stop();
    }
  });

  it('keeps records across a clean process restart on the same database', async () => {
    const db = path.join(dir, 'restart.db');
    const first = await spawnService('wallet', { env: ENV, dbPath: db });
    let second: SpawnedService | undefined;
    try {
      const c1 = spawnedClient(first, { capabilityKey: CAP_KEY });
      await c1.seedAccount({ tenant: TENANT, account: 'acct_r', balanceMinor: 1_000, currency: 'EUR' });
      const charged = await c1.send('/v1/debits', body, { intentAt: intentNow(), key: 'restart-1' });
      expect(charged).toMatchObject({ kind: 'ok', replayed: false });
      await first.stop();
      expect(first.child.exitCode).toBe(0);

      second = await spawnService('wallet', { env: ENV, dbPath: db });
      const c2 = spawnedClient(second, { capabilityKey: CAP_KEY });
      const replayed = await c2.send('/v1/debits', body, { intentAt: intentNow(), key: 'restart-1' });
      expect(replayed).toMatchObject({ kind: 'ok', replayed: true });
      if (charged.kind !== 'ok' || replayed.kind !== 'ok') throw new Error('unreachable');
      expect(replayed.body).toEqual(charged.body);
      expect(await c2.balance(TENANT, 'acct_r')).toEqual({ minor: 990, currency: 'EUR' });
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

describe('wallet refunds named by the debit operation key (compensation)', () => {
  const opKey = (seed: string): string => `op_${hashCanonical({ seed, at: Date.now() }).slice(0, 40)}`;

  it('a refund named by debitOperationKey credits back that debit and reports both of its names', async () => {
    const { account, debit } = await fixture(1_000);
    const debitKey = opKey('refund-by-key');
    const charged = await client.send('/v1/debits', debit(600), { intentAt: intentNow(), key: debitKey });
    if (charged.kind !== 'ok') throw new Error(`debit failed: ${JSON.stringify(charged)}`);
    const body = { tenant: TENANT, account, amount: { minor: 600, currency: 'EUR' }, debitOperationKey: debitKey };
    const refund = await client.send('/v1/refunds', body, { intentAt: intentNow(), key: `${debitKey}-refund` });
    expect(refund).toMatchObject({
      kind: 'ok',
      body: {
        debitOperationKey: debitKey,
        debitReceipt: (charged.body as { receipt: string }).receipt,
        balanceAfter: { minor: 1_000 },
        refundableAfter: { minor: 0 },
      },
    });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 1_000, currency: 'EUR' });
  });

  it('a refund must name its debit by exactly one of debitOperationKey or debitReceipt', async () => {
    const { key, account } = await fixture(1_000);
    const base = { tenant: TENANT, account, amount: { minor: 1, currency: 'EUR' } };
    const both = await client.send(
      '/v1/refunds',
      { ...base, debitOperationKey: 'k', debitReceipt: 'r' },
      { intentAt: intentNow(), key },
    );
    expect(both).toMatchObject({ kind: 'rejected', status: 400, code: DownstreamErrorCode.BadRequest });
    const neither = await client.send('/v1/refunds', base, { intentAt: intentNow(), key });
    expect(neither).toMatchObject({ kind: 'rejected', status: 400, code: DownstreamErrorCode.BadRequest });
    expect(await client.lookup(key, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
  });

  it('a refund for a debit key never committed is UnknownDebit with no effect, and a late debit under it is refused', async () => {
    const { account, debit } = await fixture(1_000);
    const debitKey = opKey('never-sent');
    const refundKey = `${debitKey}-refund`;
    const body = { tenant: TENANT, account, amount: { minor: 100, currency: 'EUR' }, debitOperationKey: debitKey };
    const refused = await client.send('/v1/refunds', body, { intentAt: intentNow(), key: refundKey });
    expect(refused).toMatchObject({
      kind: 'rejected',
      status: 422,
      reason: 'Wallet.UnknownDebit',
      body: { forwardOperationKey: debitKey, forwardStatus: 'none' },
    });
    expect(await client.stats(refundKey)).toMatchObject({ businessEffectCount: 0 });
    // The refusal sealed the debit key in the same transaction: the forward can no longer commit late.
    const late = await client.send('/v1/debits', debit(100), { intentAt: intentNow(), key: debitKey });
    expect(late).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.KeySealed });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 1_000, currency: 'EUR' });
  });

  it('a refund for a debit that was rejected (no effect) is UnknownDebit and moves no money', async () => {
    const { account, debit } = await fixture(50);
    const debitKey = opKey('rejected-debit');
    const rejected = await client.send('/v1/debits', debit(100), { intentAt: intentNow(), key: debitKey });
    expect(rejected).toMatchObject({ kind: 'rejected', reason: 'Wallet.InsufficientFunds' });
    const body = { tenant: TENANT, account, amount: { minor: 100, currency: 'EUR' }, debitOperationKey: debitKey };
    const refund = await client.send('/v1/refunds', body, { intentAt: intentNow(), key: `${debitKey}-refund` });
    expect(refund).toMatchObject({ status: 422, reason: 'Wallet.UnknownDebit', body: { forwardStatus: 'failed' } });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 50, currency: 'EUR' });
  });

  it('a refund while its debit is in progress is refused as in progress, not retained, and succeeds after', async () => {
    const { account, debit } = await fixture(1_000);
    const debitKey = opKey('in-flight');
    const refundKey = `${debitKey}-refund`;
    await client.armFault({ at: 'before_commit', do: 'delay', ms: 600, path: '/v1/debits' });
    const slow = client.send('/v1/debits', debit(300), { intentAt: intentNow(), key: debitKey });
    await waitFor(async () => (await client.lookup(debitKey, { tenant: TENANT })).kind === 'found');
    const body = { tenant: TENANT, account, amount: { minor: 300, currency: 'EUR' }, debitOperationKey: debitKey };
    expect(await client.send('/v1/refunds', body, { intentAt: intentNow(), key: refundKey })).toEqual({
      kind: 'in_progress',
    });
    expect(await client.lookup(refundKey, { tenant: TENANT })).toEqual({ kind: 'not_found', sealed: false });
    expect(await slow).toMatchObject({ kind: 'ok' });
    expect(await client.send('/v1/refunds', body, { intentAt: intentNow(), key: refundKey })).toMatchObject({
      kind: 'ok',
      replayed: false,
    });
    expect(await client.balance(TENANT, account)).toEqual({ minor: 1_000, currency: 'EUR' });
  });

  it("another tenant's debit key is UnknownDebit, whatever exists there", async () => {
    const { account, debit } = await fixture(1_000);
    const debitKey = opKey('other-tenant');
    expect(await client.send('/v1/debits', debit(10), { intentAt: intentNow(), key: debitKey })).toMatchObject({
      kind: 'ok',
    });
    await client.seedAccount({ tenant: 't2', account, balanceMinor: 0, currency: 'EUR' });
    const body = { tenant: 't2', account, amount: { minor: 10, currency: 'EUR' }, debitOperationKey: debitKey };
    const refund = await client.send('/v1/refunds', body, { intentAt: intentNow(), key: `${debitKey}-refund` });
    expect(refund).toMatchObject({ kind: 'rejected', status: 422, reason: 'Wallet.UnknownDebit' });
    expect(await client.balance('t2', account)).toEqual({ minor: 0, currency: 'EUR' });
  });

  it('the canonical refund body that wallet_debit declares as its compensation is accepted by the wallet', async () => {
    const { account } = await fixture(1_000);
    const ctx = { tenant: TENANT, principalId: 'user:test' };
    const args = { account, amount: { minor: 250, currency: 'EUR' } };
    const debitKey = opKey('declared');
    const debitBody = walletDebit.canonicalize(args, ctx);
    expect(await client.send(walletDebit.route!, debitBody, { intentAt: intentNow(), key: debitKey })).toMatchObject({
      kind: 'ok',
    });
    if (walletDebit.compensation.kind !== 'compensate') throw new Error('wallet_debit must be compensable');
    const refundArgs = walletRefund.args.parse(walletDebit.compensation.args({ args, operationKey: debitKey }));
    const refundBody = walletRefund.canonicalize(refundArgs, ctx);
    const refund = await client.send(walletRefund.route!, refundBody, {
      intentAt: intentNow(),
      key: `${debitKey}-refund`,
    });
    expect(refund).toMatchObject({ kind: 'ok', body: { debitOperationKey: debitKey } });
    expect(walletRefund.result.safeParse(refund.kind === 'ok' ? refund.body : null).success).toBe(true);
    expect(await client.balance(TENANT, account)).toEqual({ minor: 1_000, currency: 'EUR' });
  });
});
