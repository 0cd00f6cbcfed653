/**
 * The vendor payments server in its own process follows a payment API's documented idempotency semantics
 * (Stripe's): the first response under a key is saved and replayed (a 500 included), the same key with other
 * parameters is refused, a key in flight gets 409, a validation failure saves nothing, keys are pruned after their
 * retention (after which a reused key charges again: what Ledgerloop's recovery table must never risk), and search
 * by metadata lags writes. Every count is read from the server's own database file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnVendor, vendorRequest, type Vendor } from '../helpers/vendor';

jest.setTimeout(60_000);

let dir: string;
let vendor: Vendor;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-vendor-'));
  vendor = await spawnVendor(dir, { searchLagMs: 60_000 });
});
afterAll(async () => {
  await vendor?.stop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await vendor.admin('DELETE', '/admin/faults');
});

const charge = (customer: string, amount = '1250', key?: string, extra: Record<string, string> = {}) =>
  vendorRequest(
    vendor,
    'POST',
    '/v1/charges',
    { customer, amount, currency: 'eur', 'metadata[order]': customer, ...extra },
    key ? { 'Idempotency-Key': key } : {},
  );
const charges = (customer: string) => vendor.count('charges', { metadataKey: 'order', value: customer });

test('a repeat under the same key replays the saved answer and charges once', async () => {
  const first = await charge('cus_replay', '1250', 'k-replay');
  const again = await charge('cus_replay', '1250', 'k-replay');
  expect(first).toMatchObject({ status: 200, replayed: false });
  expect(again).toMatchObject({ status: 200, replayed: true, body: first.body });
  expect(charges('cus_replay')).toBe(1);
});

test('the same key with other parameters is refused (400 idempotency_error), nothing charged', async () => {
  await charge('cus_reuse', '1000', 'k-reuse');
  const other = await charge('cus_reuse', '2000', 'k-reuse');
  expect(other).toMatchObject({ status: 400, body: { error: { type: 'idempotency_error' } } });
  expect(charges('cus_reuse')).toBe(1);
});

test('a key whose first request is still executing gets 409; the first one charges once', async () => {
  await vendor.arm({ at: 'before_commit', do: 'delay', ms: 1_500, path: '/v1/charges' });
  const first = charge('cus_inflight', '1250', 'k-inflight');
  // The first request is being held with its key in progress: wait for the fault to have seen it.
  for (let i = 0; i < 200; i++) {
    const state = (await vendor.admin('GET', '/admin/faults')) as { rules: Array<{ fired: number }> };
    if (state.rules[0]?.fired === 1) break;
    await new Promise((r) => setImmediate(r));
  }
  const second = await charge('cus_inflight', '1250', 'k-inflight');
  expect(second).toMatchObject({ status: 409, body: { error: { code: 'idempotency_key_in_use' } } });
  expect((await first).status).toBe(200);
  expect(charges('cus_inflight')).toBe(1);
});

test('a 500 after the commit is saved and replayed: the retry cannot tell, only a lookup can', async () => {
  await vendor.arm({ at: 'after_commit', do: 'error_5xx', path: '/v1/charges' });
  expect((await charge('cus_500', '1250', 'k-500')).status).toBe(500);
  expect(await charge('cus_500', '1250', 'k-500')).toMatchObject({ status: 500, replayed: true });
  expect(charges('cus_500')).toBe(1);
});

test('a validation failure saves nothing: the same key then executes', async () => {
  expect((await charge('bad', '1250', 'k-valid')).status).toBe(400);
  expect(await charge('cus_valid', '1250', 'k-valid')).toMatchObject({ status: 200, replayed: false });
});

test('search by metadata lags writes: found only once the lag has passed on the server clock', async () => {
  await charge('cus_search', '1250', 'k-search', { 'metadata[ledgerloop_key]': 'll_search' });
  const query = `/v1/charges/search?query=${encodeURIComponent('metadata["ledgerloop_key"]:"ll_search"')}`;
  expect(await vendorRequest(vendor, 'GET', query)).toMatchObject({ status: 200, body: { data: [] } });
  await vendor.admin('POST', '/admin/clock', { advanceMs: 61_000 });
  expect(await vendorRequest(vendor, 'GET', query)).toMatchObject({
    body: { data: [{ metadata: { ledgerloop_key: 'll_search' } }] },
  });
});

test('past the retention the key is pruned and a reused key charges again (the hazard the table guards)', async () => {
  await charge('cus_pruned', '1250', 'k-pruned');
  await vendor.admin('POST', '/admin/clock', { advanceMs: 25 * 3_600_000 });
  expect(await charge('cus_pruned', '1250', 'k-pruned')).toMatchObject({ status: 200, replayed: false });
  expect(charges('cus_pruned')).toBe(2);
});

test('a request without the API key is refused and reaches nothing', async () => {
  const res = await fetch(`${vendor.url}/v1/charges`, {
    method: 'POST',
    body: 'customer=cus_anon&amount=1&currency=eur',
  });
  expect(res.status).toBe(401);
  expect(charges('cus_anon')).toBe(0);
});
