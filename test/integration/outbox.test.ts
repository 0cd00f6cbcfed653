/**
 * The transactional outbox, end to end with real processes: the orders service writes the fulfilment and its
 * `OrderFulfilled` message in one SQLite transaction; the relay (its own process on the same database)
 * publishes to the notifications service and then acknowledges. A relay that dies after publishing and before
 * acknowledging publishes again after a restart, and the consumer's deduplication by event id keeps it to ONE
 * email.
 */
import { generateCapabilityTrust, RELAY_SIGNING_KEY_ENV } from '../../src/capability/capability-keys';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { ORDER_FULFILLED } from '../../services/orders/orders';
import { deriveEventId, type OutboxStats } from '../../services/orders/outbox';
import { RELAY_CRASH_ENV } from '../../services/orders/relay-main';
import { intentNow, exited, ServiceSandbox, unique, waitFor, type ServiceUnderTest } from '../helpers/services';

jest.setTimeout(60_000);

const T = 'acme';
const sandbox = new ServiceSandbox('outbox');
let notifications: ServiceUnderTest;

interface EventStats {
  deliveries: number;
  emails: number;
  consumed: boolean;
  acceptedFence: number | null;
}

const outbox = (svc: ServiceUnderTest) => svc.client.request<OutboxStats>('GET', '/admin/outbox');
const order = (svc: ServiceUnderTest, orderId: string) =>
  svc.client.request<{ status: string; eventId: string | null }>('GET', `/v1/orders/${T}/${orderId}`);
const eventStats = (eventId: string) => notifications.client.request<EventStats>('GET', `/admin/events/${eventId}`);
const emailCount = async (orderId: string) =>
  (await notifications.client.request<{ count: number }>('GET', `/admin/emails?tenant=${T}&orderId=${orderId}`)).count;

/** A fresh order seeded on `svc`. */
async function seedOrder(svc: ServiceUnderTest): Promise<string> {
  const orderId = unique('ord');
  await svc.client.request('POST', '/admin/orders', { tenant: T, orderId, customerEmail: 'ada@example.com' });
  return orderId;
}

/** Starts the relay on the orders database `dbFile`, publishing to the notifications service. */
function startRelay(dbFile: string, env: Record<string, string> = {}): Promise<ServiceUnderTest> {
  return sandbox.start('orders-relay', dbFile, {
    extraArgs: ['--target', notifications.proc.url, '--poll-ms', '50'],
    env,
  });
}

beforeAll(async () => {
  notifications = await sandbox.start('notifications', 'notifications.db');
});
afterAll(() => sandbox.dispose());

describe('orders: the fulfilment and its message intent commit together', () => {
  let orders: ServiceUnderTest;
  beforeAll(async () => {
    orders = await sandbox.start('orders', 'orders-atomic.db');
  });

  it('writes the order and one outbox row carrying the request fence and a deterministic event id', async () => {
    const orderId = await seedOrder(orders);
    const key = unique('op-fulfil');
    const body = { tenant: T, orderId };
    const done = await orders.client.send('/v1/fulfilments', body, { intentAt: intentNow(), key, fence: 3 });
    const eventId = deriveEventId(ORDER_FULFILLED, T, orderId, key);
    expect(done).toMatchObject({ kind: 'ok', replayed: false, body: { orderId, status: 'fulfilled', eventId } });
    expect(await order(orders, orderId)).toMatchObject({ status: 'fulfilled', eventId });
    const stats = await outbox(orders);
    expect(stats.events.filter((e) => e.aggregateId === orderId)).toEqual([
      expect.objectContaining({ eventId, type: ORDER_FULFILLED, operationKey: key, fence: 3, status: 'pending' }),
    ]);
    // The same key replays: no second outbox row. Other arguments under the key are refused.
    expect(await orders.client.send('/v1/fulfilments', body, { intentAt: intentNow(), key, fence: 3 })).toMatchObject({
      replayed: true,
    });
    const other = await orders.client.send(
      '/v1/fulfilments',
      { tenant: T, orderId: 'ord-other' },
      { intentAt: intentNow(), key, fence: 3 },
    );
    expect(other).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.ArgumentsMismatch });
    expect((await outbox(orders)).rows).toBe(stats.rows);
  });

  it('an unknown order and an order fulfilled by another intent are rejected without an outbox row', async () => {
    const before = (await outbox(orders)).rows;
    const unknown = await orders.client.send(
      '/v1/fulfilments',
      { tenant: T, orderId: 'ord-nope' },
      { intentAt: intentNow(), key: unique('k') },
    );
    expect(unknown).toMatchObject({ kind: 'rejected', status: 422, reason: 'Orders.UnknownOrder' });
    const orderId = await seedOrder(orders);
    await orders.client.send('/v1/fulfilments', { tenant: T, orderId }, { intentAt: intentNow(), key: unique('k') });
    const twice = await orders.client.send(
      '/v1/fulfilments',
      { tenant: T, orderId },
      { intentAt: intentNow(), key: unique('k') },
    );
    expect(twice).toMatchObject({ kind: 'rejected', status: 422, reason: 'Orders.AlreadyFulfilled' });
    expect((await outbox(orders)).rows).toBe(before + 1);
  });

  it('an apply that fails between the order write and the outbox write leaves neither row', async () => {
    const orderId = await seedOrder(orders);
    const key = unique('op-throw');
    const before = (await outbox(orders)).rows;
    await orders.client.request('POST', '/admin/fulfilment-faults', { do: 'throw' });
    const failed = await orders.client.send('/v1/fulfilments', { tenant: T, orderId }, { intentAt: intentNow(), key });
    expect(failed).toMatchObject({ kind: 'unavailable' }); // 500 with committed: false
    expect(await order(orders, orderId)).toMatchObject({ status: 'open', eventId: null });
    expect((await outbox(orders)).rows).toBe(before);
    expect(await orders.client.lookup(key, { tenant: T })).toEqual({ kind: 'not_found', sealed: false });
    // The same key then commits both rows, once.
    expect(
      await orders.client.send('/v1/fulfilments', { tenant: T, orderId }, { intentAt: intentNow(), key }),
    ).toMatchObject({ kind: 'ok' });
    expect(await order(orders, orderId)).toMatchObject({ status: 'fulfilled' });
    expect((await outbox(orders)).rows).toBe(before + 1);
  });

  it('a process killed inside the transaction commits neither row; after restart the same key commits both once', async () => {
    let svc = await sandbox.start('orders', 'orders-crash.db');
    const orderId = await seedOrder(svc);
    const key = unique('op-crash');
    await svc.client.request('POST', '/admin/fulfilment-faults', { do: 'crash' });
    const lost = await svc.client.send('/v1/fulfilments', { tenant: T, orderId }, { intentAt: intentNow(), key });
    expect(lost.kind).toBe('response_lost');
    expect(await exited(svc.proc)).toEqual({ code: null, signal: 'SIGKILL' });

    svc = await sandbox.start('orders', 'orders-crash.db');
    expect(await order(svc, orderId)).toMatchObject({ status: 'open', eventId: null });
    expect((await outbox(svc)).rows).toBe(0);
    // The in-progress record of the dead process was released at start: no effect exists under the key.
    expect(await svc.client.lookup(key, { tenant: T })).toEqual({ kind: 'not_found', sealed: false });
    expect(await svc.client.stats(key)).toMatchObject({ dispatchCount: 1, businessEffectCount: 0 });
    expect(
      await svc.client.send('/v1/fulfilments', { tenant: T, orderId }, { intentAt: intentNow(), key }),
    ).toMatchObject({
      kind: 'ok',
      replayed: false,
    });
    expect(await order(svc, orderId)).toMatchObject({ status: 'fulfilled' });
    expect(await outbox(svc)).toMatchObject({ rows: 1, pending: 1 });
    expect(await svc.client.stats(key)).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });
});

describe('the relay: at-least-once delivery, exactly one email', () => {
  it('crashes after publishing and before acknowledging, publishes again after restart, and one email is sent', async () => {
    const orders = await sandbox.start('orders', 'orders-relay.db');
    const orderId = await seedOrder(orders);
    const key = unique('op-relay');
    const done = await orders.client.send(
      '/v1/fulfilments',
      { tenant: T, orderId },
      { intentAt: intentNow(), key, fence: 2 },
    );
    if (done.kind !== 'ok') throw new Error(`fulfilment failed: ${JSON.stringify(done)}`);
    const eventId = (done.body as { eventId: string }).eventId;

    // Armed at start by the environment: SIGKILL right after the first publish, before the acknowledgement.
    const doomed = await startRelay('orders-relay.db', { [RELAY_CRASH_ENV]: '1' });
    expect(await exited(doomed.proc)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await eventStats(eventId)).toMatchObject({ deliveries: 1, emails: 1, consumed: true });
    expect(await outbox(orders)).toMatchObject({
      pending: 1,
      acknowledged: 0,
      publishAttempts: 1,
      unrecordedAttempts: 1,
    });

    const relay = await startRelay('orders-relay.db');
    await waitFor(async () => (await outbox(orders)).acknowledged === 1);
    expect(await eventStats(eventId)).toEqual({ eventId, deliveries: 2, emails: 1, consumed: true, acceptedFence: 2 });
    expect(await emailCount(orderId)).toBe(1);
    const stats = await relay.client.request<OutboxStats & { process: { publishes: number } }>('GET', '/admin/relay');
    expect(stats).toMatchObject({ rows: 1, pending: 0, acknowledged: 1, publishAttempts: 2, unrecordedAttempts: 1 });
    expect(stats.events[0]).toMatchObject({ eventId, status: 'acknowledged', attempts: 2, fence: 2 });
    expect(stats.process.publishes).toBe(1);
  });

  it('a crash armed over the admin route hits the next publish; the restarted relay delivers the rest once', async () => {
    const orders = await sandbox.start('orders', 'orders-relay-admin.db');
    const relay = await startRelay('orders-relay-admin.db');
    await relay.client.request('POST', '/admin/relay/faults', { crashAfterPublish: 1 });
    const orderIds = [await seedOrder(orders), await seedOrder(orders)];
    for (const orderId of orderIds) {
      const sent = await orders.client.send(
        '/v1/fulfilments',
        { tenant: T, orderId },
        { intentAt: intentNow(), key: unique('op-admin') },
      );
      // The whole outcome on a failure: its reason says which refusal it was.
      expect(sent.kind === 'ok' ? 'ok' : sent).toBe('ok');
    }
    expect(await exited(relay.proc)).toEqual({ code: null, signal: 'SIGKILL' });
    const restarted = await startRelay('orders-relay-admin.db');
    // A generous bound: a loaded machine starts the relay process slowly; the assertions below are the test.
    await waitFor(
      async () => (await outbox(orders)).acknowledged === 2,
      30_000,
      async () => ({ outbox: await outbox(orders), relay: await restarted.client.request('GET', '/admin/relay') }),
    );
    for (const orderId of orderIds) expect(await emailCount(orderId)).toBe(1);
    const stats = await outbox(orders);
    expect(stats.publishAttempts).toBe(3); // the first event twice, the second once
  });

  it('a publish with a fence lower than one the consumer accepted for that event is refused and dead-lettered', async () => {
    const orders = await sandbox.start('orders', 'orders-stale.db');
    const orderId = await seedOrder(orders);
    const key = unique('op-stale');
    // The event id is deterministic: a newer owner already delivered this event with fence 9.
    const eventId = deriveEventId(ORDER_FULFILLED, T, orderId, key);
    const newer = {
      eventId,
      type: ORDER_FULFILLED,
      tenant: T,
      orderId,
      customerEmail: 'ada@example.com',
      fulfilledAt: new Date().toISOString(),
      sourceOperationKey: key,
    };
    expect(
      await notifications.client.send('/v1/events', newer, { intentAt: intentNow(), key: eventId, fence: 9 }),
    ).toMatchObject({
      kind: 'ok',
    });
    await orders.client.send('/v1/fulfilments', { tenant: T, orderId }, { intentAt: intentNow(), key, fence: 1 });
    await startRelay('orders-stale.db');
    await waitFor(async () => (await outbox(orders)).dead === 1);
    expect((await outbox(orders)).events[0]).toMatchObject({
      eventId,
      fence: 1,
      status: 'dead',
      lastError: expect.stringContaining(DownstreamErrorCode.StaleFence),
    });
    expect(await eventStats(eventId)).toMatchObject({ deliveries: 2, emails: 1, acceptedFence: 9 });
  });
});

describe('capabilities on the relay path', () => {
  it('with a capability key on every process, the relay signs each delivery and the consumer accepts it', async () => {
    const trust = generateCapabilityTrust();
    const consumer = await sandbox.start('notifications', 'notifications-cap.db', { trust });
    const orders = await sandbox.start('orders', 'orders-cap.db');
    const orderId = await seedOrder(orders);
    await orders.client.send(
      '/v1/fulfilments',
      { tenant: T, orderId },
      { intentAt: intentNow(), key: unique('op-cap') },
    );
    // Unsigned (a relay without its key runs only with --insecure-dev), the consumer refuses the delivery: the
    // row is retried, never dead-lettered.
    const unsigned = await sandbox.start('orders-relay', 'orders-cap.db', {
      extraArgs: ['--target', consumer.proc.url, '--poll-ms', '50', '--insecure-dev'],
      env: { [RELAY_SIGNING_KEY_ENV]: '' },
    });
    await waitFor(async () => (await outbox(orders)).publishAttempts >= 2);
    await unsigned.proc.stop();
    expect(await outbox(orders)).toMatchObject({ pending: 1, dead: 0 });
    // A relay holding its own key delivers it.
    await sandbox.start('orders-relay', 'orders-cap.db', {
      extraArgs: ['--target', consumer.proc.url, '--poll-ms', '50'],
      trust,
    });
    await waitFor(async () => (await outbox(orders)).acknowledged === 1);
    const emails = await consumer.client.request<{ count: number }>(
      'GET',
      `/admin/emails?tenant=${T}&orderId=${orderId}`,
    );
    expect(emails.count).toBe(1);
  });
});
