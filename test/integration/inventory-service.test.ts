/**
 * The inventory as a real process: reservations under the shared idempotency contract, the out-of-stock
 * rejection, and releases named by the reservation's operation key (its compensation).
 */
import { hashCanonical } from '../../src/domain/canonical';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { inventoryRelease, inventoryReserve } from '../../src/tools/inventory.tool';
import { intentNow, ServiceSandbox, unique, type ServiceUnderTest } from '../helpers/services';

jest.setTimeout(30_000);

const T = 'acme';
const sandbox = new ServiceSandbox('inventory');
let inv: ServiceUnderTest;

interface Stock {
  onHand: number;
  reserved: number;
  available: number;
}

const opKey = (seed: string): string => `op_${hashCanonical({ seed: unique(seed) }).slice(0, 40)}`;
const stock = (tenant: string, sku: string) => inv.client.request<Stock>('GET', `/v1/stock/${tenant}/${sku}`);

/** A fresh SKU seeded with `onHand` units. */
async function sku(onHand: number): Promise<string> {
  const id = unique('SKU');
  await inv.client.request('POST', '/admin/stock', { tenant: T, sku: id, onHand });
  return id;
}

beforeAll(async () => {
  inv = await sandbox.start('inventory', 'inventory.db');
});
afterAll(() => sandbox.dispose());

describe('inventory service (real process)', () => {
  it('declares its contract and a 24 h retention', async () => {
    expect(await inv.client.contract()).toEqual({ service: 'inventory', idempotencyRetentionMs: 86_400_000 });
  });

  it('a reservation holds stock once: the same key replays it, other arguments under the key are refused', async () => {
    const s = await sku(10);
    const key = opKey('reserve');
    const first = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: s, quantity: 3 },
      { intentAt: intentNow(), key },
    );
    expect(first).toMatchObject({ kind: 'ok', replayed: false, body: { sku: s, quantity: 3, availableAfter: 7 } });
    const again = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: s, quantity: 3 },
      { intentAt: intentNow(), key },
    );
    expect(again).toMatchObject({ kind: 'ok', replayed: true });
    if (first.kind !== 'ok' || again.kind !== 'ok') throw new Error('unreachable');
    expect(again.body).toEqual(first.body);
    const other = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: s, quantity: 4 },
      { intentAt: intentNow(), key },
    );
    expect(other).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.ArgumentsMismatch });
    expect(await stock(T, s)).toEqual({ tenant: T, sku: s, onHand: 10, reserved: 3, available: 7 });
    expect(await inv.client.stats(key)).toMatchObject({ dispatchCount: 3, businessEffectCount: 1 });
  });

  it('more than is available is OutOfStock, retained as failed, and reserves nothing', async () => {
    const s = await sku(2);
    const key = opKey('oos');
    const out = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: s, quantity: 3 },
      { intentAt: intentNow(), key },
    );
    expect(out).toMatchObject({
      kind: 'rejected',
      status: 422,
      reason: 'Inventory.OutOfStock',
      body: { available: 2 },
    });
    await inv.client.request('POST', '/admin/stock', { tenant: T, sku: s, onHand: 100 });
    const retry = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: s, quantity: 3 },
      { intentAt: intentNow(), key },
    );
    expect(retry).toMatchObject({ kind: 'rejected', status: 422, reason: 'Inventory.OutOfStock' });
    expect((await stock(T, s)).reserved).toBe(0);
    expect(await inv.client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 0 });
  });

  it('a SKU that was never stocked is UnknownSku', async () => {
    const out = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: 'NOPE', quantity: 1 },
      { intentAt: intentNow(), key: opKey('u') },
    );
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Inventory.UnknownSku' });
  });

  it('a release by the reservation key returns the stock, and a second release under another key is refused', async () => {
    const s = await sku(5);
    const key = opKey('to-release');
    await inv.client.send('/v1/reservations', { tenant: T, sku: s, quantity: 4 }, { intentAt: intentNow(), key });
    const release = { tenant: T, reservationOperationKey: key };
    const first = await inv.client.send('/v1/releases', release, { intentAt: intentNow(), key: `${key}-rel1` });
    expect(first).toMatchObject({ kind: 'ok', body: { sku: s, quantity: 4, availableAfter: 5 } });
    const second = await inv.client.send('/v1/releases', release, { intentAt: intentNow(), key: `${key}-rel2` });
    expect(second).toMatchObject({ kind: 'rejected', status: 422, reason: 'Inventory.AlreadyReleased' });
    expect(await stock(T, s)).toMatchObject({ reserved: 0, available: 5 });
    expect(await inv.client.stats(`${key}-rel`, { prefix: true })).toMatchObject({ businessEffectCount: 1 });
  });

  it('a release for a key that never reserved anything is UnknownReservation with no effect, and seals that key', async () => {
    const s = await sku(5);
    const key = opKey('never');
    const out = await inv.client.send(
      '/v1/releases',
      { tenant: T, reservationOperationKey: key },
      { intentAt: intentNow(), key: `${key}-r` },
    );
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Inventory.UnknownReservation' });
    expect(await inv.client.stats(`${key}-r`)).toMatchObject({ businessEffectCount: 0 });
    const late = await inv.client.send(
      '/v1/reservations',
      { tenant: T, sku: s, quantity: 1 },
      { intentAt: intentNow(), key },
    );
    expect(late).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.KeySealed });
    expect((await stock(T, s)).reserved).toBe(0);
  });

  it("a release naming another tenant's reservation is UnknownReservation and releases nothing", async () => {
    const s = await sku(5);
    const key = opKey('foreign');
    await inv.client.send('/v1/reservations', { tenant: T, sku: s, quantity: 2 }, { intentAt: intentNow(), key });
    const out = await inv.client.send(
      '/v1/releases',
      { tenant: 'globex', reservationOperationKey: key },
      { intentAt: intentNow(), key: `${key}-r` },
    );
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Inventory.UnknownReservation' });
    expect((await stock(T, s)).reserved).toBe(2);
  });

  it('a fence lower than the one accepted for a key is refused as stale', async () => {
    const s = await sku(5);
    const key = opKey('fence');
    const body = { tenant: T, sku: s, quantity: 1 };
    expect(await inv.client.send('/v1/reservations', body, { intentAt: intentNow(), key, fence: 7 })).toMatchObject({
      kind: 'ok',
    });
    const stale = await inv.client.send('/v1/reservations', body, { intentAt: intentNow(), key, fence: 6 });
    expect(stale).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.StaleFence });
  });

  it('a dropped response after commit is found by lookup, and the same key replays without a second hold', async () => {
    const s = await sku(5);
    const key = opKey('lost');
    await inv.client.armFault({ at: 'after_commit', do: 'drop_response', path: '/v1/reservations' });
    const body = { tenant: T, sku: s, quantity: 2 };
    expect((await inv.client.send('/v1/reservations', body, { intentAt: intentNow(), key })).kind).toBe(
      'response_lost',
    );
    expect(await inv.client.lookup(key, { tenant: T })).toMatchObject({
      kind: 'found',
      record: { status: 'completed' },
    });
    expect(await inv.client.send('/v1/reservations', body, { intentAt: intentNow(), key })).toMatchObject({
      kind: 'ok',
      replayed: true,
    });
    expect((await stock(T, s)).reserved).toBe(2);
  });

  it('the canonical bodies of inventory_reserve and its declared compensation are accepted', async () => {
    const s = await sku(5);
    const ctx = { tenant: T, principalId: 'user:test' };
    const key = opKey('declared');
    const args = inventoryReserve.args.parse({ sku: s, quantity: 2 });
    const reserved = await inv.client.send(inventoryReserve.route!, inventoryReserve.canonicalize(args, ctx), {
      intentAt: intentNow(),
      key,
    });
    expect(reserved.kind === 'ok' && inventoryReserve.result.safeParse(reserved.body).success).toBe(true);
    if (inventoryReserve.compensation.kind !== 'compensate') throw new Error('inventory_reserve must be compensable');
    const relArgs = inventoryRelease.args.parse(inventoryReserve.compensation.args({ args, operationKey: key }));
    const released = await inv.client.send(inventoryRelease.route!, inventoryRelease.canonicalize(relArgs, ctx), {
      intentAt: intentNow(),
      key: `${key}-comp`,
    });
    expect(released.kind === 'ok' && inventoryRelease.result.safeParse(released.body).success).toBe(true);
    expect((await stock(T, s)).reserved).toBe(0);
  });
});
