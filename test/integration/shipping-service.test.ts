/**
 * The shipping service as a real process: scheduling under the shared idempotency contract, its business
 * failures (unserved country, no capacity, order already scheduled), and cancellation by the shipment's
 * operation key, a compensation that itself fails once the parcel left.
 */
import { hashCanonical } from '../../src/domain/canonical';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { shippingCancel, shippingSchedule } from '../../src/tools/shipping.tool';
import { intentNow, ServiceSandbox, unique, type ServiceUnderTest } from '../helpers/services';

jest.setTimeout(30_000);

const T = 'acme';
const ADDRESS = { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' };
const sandbox = new ServiceSandbox('shipping');
let ship: ServiceUnderTest;

const opKey = (seed: string): string => `op_${hashCanonical({ seed: unique(seed) }).slice(0, 40)}`;
const shipments = async (orderId: string) =>
  (await ship.client.request<{ shipments: { status: string }[] }>('GET', `/v1/shipments/${T}/${orderId}`)).shipments;
const setCapacity = (remaining: number | null) => ship.client.request('POST', '/admin/capacity', { remaining });

beforeAll(async () => {
  ship = await sandbox.start('shipping', 'shipping.db');
});
afterAll(() => sandbox.dispose());
afterEach(() => setCapacity(null));

describe('shipping service (real process)', () => {
  it('declares its contract', async () => {
    expect(await ship.client.contract()).toEqual({ service: 'shipping', idempotencyRetentionMs: 86_400_000 });
  });

  it('a shipment is scheduled once: same key replays, other arguments under the key are refused', async () => {
    const orderId = unique('ord');
    const key = opKey('schedule');
    const body = { tenant: T, orderId, address: ADDRESS };
    const first = await ship.client.send('/v1/shipments', body, { intentAt: intentNow(), key });
    expect(first).toMatchObject({ kind: 'ok', replayed: false, body: { orderId, status: 'scheduled', country: 'DE' } });
    expect(await ship.client.send('/v1/shipments', body, { intentAt: intentNow(), key })).toMatchObject({
      kind: 'ok',
      replayed: true,
    });
    const moved = { ...body, address: { ...ADDRESS, postalCode: '10117' } };
    expect(await ship.client.send('/v1/shipments', moved, { intentAt: intentNow(), key })).toMatchObject({
      kind: 'rejected',
      status: 409,
      code: DownstreamErrorCode.ArgumentsMismatch,
    });
    expect(await shipments(orderId)).toHaveLength(1);
    expect(await ship.client.stats(key)).toMatchObject({ dispatchCount: 3, businessEffectCount: 1 });
  });

  it('a country the carrier does not serve is Unserviceable and schedules nothing', async () => {
    const orderId = unique('ord');
    const body = { tenant: T, orderId, address: { ...ADDRESS, country: 'AQ' } };
    const out = await ship.client.send('/v1/shipments', body, { intentAt: intentNow(), key: opKey('aq') });
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Shipping.Unserviceable' });
    expect(await shipments(orderId)).toEqual([]);
  });

  it('with no capacity left every shipment is refused with NoCapacity', async () => {
    await setCapacity(0);
    for (const country of ['DE', 'FR']) {
      const body = { tenant: T, orderId: unique('ord'), address: { ...ADDRESS, country } };
      const out = await ship.client.send('/v1/shipments', body, { intentAt: intentNow(), key: opKey('full') });
      expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Shipping.NoCapacity' });
    }
  });

  it('capacity counts down: the shipment after the last slot is refused', async () => {
    await setCapacity(1);
    const ok = await ship.client.send(
      '/v1/shipments',
      { tenant: T, orderId: unique('ord'), address: ADDRESS },
      { intentAt: intentNow(), key: opKey('slot') },
    );
    expect(ok).toMatchObject({ kind: 'ok' });
    expect(await ship.client.request('GET', '/admin/capacity')).toEqual({ remaining: 0 });
    const next = await ship.client.send(
      '/v1/shipments',
      { tenant: T, orderId: unique('ord'), address: ADDRESS },
      { intentAt: intentNow(), key: opKey('slot') },
    );
    expect(next).toMatchObject({ kind: 'rejected', reason: 'Shipping.NoCapacity' });
  });

  it('a second shipment for an order that has one is AlreadyScheduled', async () => {
    const orderId = unique('ord');
    const body = { tenant: T, orderId, address: ADDRESS };
    await ship.client.send('/v1/shipments', body, { intentAt: intentNow(), key: opKey('a') });
    const out = await ship.client.send('/v1/shipments', body, { intentAt: intentNow(), key: opKey('b') });
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Shipping.AlreadyScheduled' });
  });

  it('a cancellation by the shipment key cancels it once; a second one under another key is AlreadyCancelled', async () => {
    const orderId = unique('ord');
    const key = opKey('cancel');
    await ship.client.send('/v1/shipments', { tenant: T, orderId, address: ADDRESS }, { intentAt: intentNow(), key });
    const cancel = { tenant: T, shipmentOperationKey: key };
    const first = await ship.client.send('/v1/cancellations', cancel, { intentAt: intentNow(), key: `${key}-c1` });
    expect(first).toMatchObject({ kind: 'ok', body: { orderId, status: 'cancelled', shipmentOperationKey: key } });
    const second = await ship.client.send('/v1/cancellations', cancel, { intentAt: intentNow(), key: `${key}-c2` });
    expect(second).toMatchObject({ kind: 'rejected', status: 422, reason: 'Shipping.AlreadyCancelled' });
    expect(await shipments(orderId)).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    // The order can be scheduled again under a new intent.
    const again = await ship.client.send(
      '/v1/shipments',
      { tenant: T, orderId, address: ADDRESS },
      { intentAt: intentNow(), key: opKey('r') },
    );
    expect(again).toMatchObject({ kind: 'ok' });
  });

  it('a cancellation for a key that never scheduled anything is UnknownShipment with no effect, and seals that key', async () => {
    const key = opKey('never');
    const out = await ship.client.send(
      '/v1/cancellations',
      { tenant: T, shipmentOperationKey: key },
      { intentAt: intentNow(), key: `${key}-c` },
    );
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Shipping.UnknownShipment' });
    expect(await ship.client.stats(`${key}-c`)).toMatchObject({ businessEffectCount: 0 });
    const orderId = unique('ord');
    const late = await ship.client.send(
      '/v1/shipments',
      { tenant: T, orderId, address: ADDRESS },
      { intentAt: intentNow(), key },
    );
    expect(late).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.KeySealed });
    expect(await shipments(orderId)).toEqual([]);
  });

  it('a compensation can fail: a dispatched shipment cannot be cancelled', async () => {
    const orderId = unique('ord');
    const key = opKey('gone');
    await ship.client.send('/v1/shipments', { tenant: T, orderId, address: ADDRESS }, { intentAt: intentNow(), key });
    await ship.client.request('POST', '/admin/dispatch', { tenant: T, shipmentOperationKey: key });
    const out = await ship.client.send(
      '/v1/cancellations',
      { tenant: T, shipmentOperationKey: key },
      { intentAt: intentNow(), key: `${key}-c` },
    );
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Shipping.AlreadyDispatched' });
    expect(await shipments(orderId)).toEqual([expect.objectContaining({ status: 'dispatched' })]);
  });

  it('the canonical bodies of shipping_schedule and its declared compensation are accepted', async () => {
    const ctx = { tenant: T, principalId: 'user:test' };
    const key = opKey('declared');
    const orderId = unique('ord');
    const args = shippingSchedule.args.parse({
      orderId,
      address: { country: 'nl', postalCode: '1012  ab', line1: '  Dam   1 ' },
    });
    const canonical = shippingSchedule.canonicalize(args, ctx);
    expect(canonical).toEqual({
      tenant: T,
      orderId,
      address: { country: 'NL', postalCode: '1012 AB', line1: 'Dam 1' },
    });
    const scheduled = await ship.client.send(shippingSchedule.route!, canonical, { intentAt: intentNow(), key });
    expect(scheduled.kind === 'ok' && shippingSchedule.result.safeParse(scheduled.body).success).toBe(true);
    if (shippingSchedule.compensation.kind !== 'compensate') throw new Error('shipping_schedule must be compensable');
    const cancelArgs = shippingCancel.args.parse(shippingSchedule.compensation.args({ args, operationKey: key }));
    const cancelled = await ship.client.send(shippingCancel.route!, shippingCancel.canonicalize(cancelArgs, ctx), {
      intentAt: intentNow(),
      key: `${key}-comp`,
    });
    expect(cancelled.kind === 'ok' && shippingCancel.result.safeParse(cancelled.body).success).toBe(true);
  });
});
