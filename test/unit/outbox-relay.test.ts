/**
 * The relay's decisions, against an in-memory orders database and a scripted consumer: what each publish
 * outcome does to the row, that a transient failure stops the pass so order is kept, and that every attempt is
 * logged before it is sent.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import type { DownstreamClient, SendOutcome } from '../../src/downstream/client';
import { applyFulfilment, migrateOrders, seedOrder } from '../../services/orders/orders';
import { outboxStats } from '../../services/orders/outbox';
import { decideDelivery, OutboxRelay } from '../../services/orders/relay';

describe('decideDelivery', () => {
  const rejected = (status: number, code: string, reason?: string): SendOutcome => ({
    kind: 'rejected',
    status,
    code,
    ...(reason === undefined ? {} : { reason }),
    body: {},
  });
  it.each<[string, SendOutcome, string]>([
    ['a first delivery is acknowledged', { kind: 'ok', status: 201, body: {}, replayed: false }, 'acknowledge'],
    ['a replayed delivery is acknowledged', { kind: 'ok', status: 201, body: {}, replayed: true }, 'acknowledge'],
    [
      'an event consumed before is acknowledged',
      rejected(422, 'Downstream.Rejected', 'Notifications.DuplicateEvent'),
      'acknowledge',
    ],
    ['an unreachable consumer is retried', { kind: 'unavailable', reason: 'ECONNREFUSED' }, 'retry'],
    ['a lost response is retried', { kind: 'response_lost', reason: 'reset' }, 'retry'],
    ['a consumer still in progress is retried', { kind: 'in_progress' }, 'retry'],
    [
      'a refused relay capability is retried (the relay is misconfigured, not the event)',
      rejected(403, 'Capability.Invalid'),
      'retry',
    ],
    ['a stale fence is dead-lettered', rejected(409, 'Fence.Stale'), 'dead_letter'],
    [
      'a business refusal is dead-lettered',
      rejected(422, 'Downstream.Rejected', 'Notifications.Suppressed'),
      'dead_letter',
    ],
  ])('%s', (_title, outcome, decision) => {
    expect(decideDelivery(outcome).decision).toBe(decision);
  });
});

describe('OutboxRelay', () => {
  let db: Database;
  beforeEach(() => {
    db = new BetterSqlite3(':memory:');
    migrateOrders(db);
  });
  afterEach(() => db.close());

  function fulfil(orderId: string, fence: number): void {
    seedOrder(db, { tenant: 't', orderId, customerEmail: 'a@example.com' });
    db.transaction(() =>
      applyFulfilment(db, { tenant: 't', orderId }, `op-${orderId}`, {
        key: `op-${orderId}`,
        argumentsHash: '',
        fence,
        intentAtMs: Date.now(),
      }),
    )();
  }

  /** A consumer answering from a script, recording what it was sent. */
  function consumer(script: SendOutcome[]) {
    const sent: { key: string; fence: number | undefined; body: unknown }[] = [];
    const target = {
      send: (_path: string, body: unknown, options: { key: string; fence?: number }) => {
        sent.push({ key: options.key, fence: options.fence, body });
        return Promise.resolve(script.shift() ?? { kind: 'ok', status: 201, body: {}, replayed: false });
      },
    } as unknown as DownstreamClient;
    return { target, sent };
  }

  it('publishes with the event id as the key and the row fence, then acknowledges', async () => {
    fulfil('o1', 4);
    const { target, sent } = consumer([]);
    const results = await new OutboxRelay({ db, target }).publishPending();
    expect(results).toEqual([expect.objectContaining({ decision: 'acknowledge', outcome: 'delivered' })]);
    const [event] = outboxStats(db).events;
    expect(sent).toEqual([
      { key: event?.eventId, fence: 4, body: expect.objectContaining({ eventId: event?.eventId }) },
    ]);
    expect(outboxStats(db)).toMatchObject({ acknowledged: 1, pending: 0, publishAttempts: 1, unrecordedAttempts: 0 });
  });

  it('a transient failure stops the pass: later rows wait, in order, for the next pass', async () => {
    fulfil('o1', 0);
    fulfil('o2', 0);
    const { target, sent } = consumer([{ kind: 'unavailable', reason: 'down' }]);
    const relay = new OutboxRelay({ db, target });
    expect(await relay.publishPending()).toHaveLength(1);
    expect(outboxStats(db)).toMatchObject({ pending: 2, publishAttempts: 1 });
    await relay.publishPending();
    expect(outboxStats(db)).toMatchObject({ acknowledged: 2, publishAttempts: 3 });
    expect(sent.map((s) => (s.body as { orderId: string }).orderId)).toEqual(['o1', 'o1', 'o2']);
  });

  it('the crash fault fires after the publish and before the acknowledgement is recorded', async () => {
    fulfil('o1', 0);
    const { target } = consumer([]);
    const crash = new Error('crashed');
    const relay = new OutboxRelay({
      db,
      target,
      crash: () => {
        throw crash;
      },
    });
    relay.armCrash(1);
    await expect(relay.publishPending()).rejects.toBe(crash);
    expect(outboxStats(db)).toMatchObject({ pending: 1, publishAttempts: 1, unrecordedAttempts: 1 });
    expect(relay.crashArmed).toBe(false);
  });
});
