/**
 * The notifications service as a real process: one email per operation key (the effect is irreversible),
 * the template and suppression rejections, and the event consumer that deduplicates by event id and refuses a
 * delivery whose fence is lower than one it accepted for that event.
 */
import { generateCapabilityTrust } from '../../src/capability/capability-keys';
import { DownstreamClient } from '../../src/downstream/client';
import { hashCanonical } from '../../src/domain/canonical';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { notificationsSendEmail } from '../../src/tools/notifications.tool';
import { intentNow, ServiceSandbox, unique, waitFor, type ServiceUnderTest } from '../helpers/services';

jest.setTimeout(30_000);

const T = 'acme';
const sandbox = new ServiceSandbox('notifications');
let mail: ServiceUnderTest;

interface EmailList {
  count: number;
  emails: { to: string; template: string; subject: string; eventId: string | null }[];
}
interface EventStats {
  deliveries: number;
  emails: number;
  consumed: boolean;
  acceptedFence: number | null;
}

const opKey = (seed: string): string => `op_${hashCanonical({ seed: unique(seed) }).slice(0, 40)}`;
const emailsOf = (orderId?: string) =>
  mail.client.request<EmailList>('GET', `/admin/emails?tenant=${T}${orderId ? `&orderId=${orderId}` : ''}`);
const eventStats = (eventId: string) => mail.client.request<EventStats>('GET', `/admin/events/${eventId}`);

/** An `OrderFulfilled` event as the relay publishes it. */
function event(orderId: string) {
  const eventId = `evt_${hashCanonical({ orderId }).slice(0, 40)}`;
  return {
    eventId,
    type: 'OrderFulfilled',
    tenant: T,
    orderId,
    customerEmail: 'ada@example.com',
    fulfilledAt: new Date().toISOString(),
    sourceOperationKey: opKey('fulfil'),
  };
}

beforeAll(async () => {
  mail = await sandbox.start('notifications', 'notifications.db');
});
afterAll(() => sandbox.dispose());

describe('notifications service (real process)', () => {
  it('declares its contract', async () => {
    expect(await mail.client.contract()).toEqual({ service: 'notifications', idempotencyRetentionMs: 86_400_000 });
  });

  it('an email is sent once per key: the same key replays, other arguments under the key are refused', async () => {
    const key = opKey('welcome');
    const to = `${unique('u')}@example.com`;
    const body = { tenant: T, to, template: 'welcome', vars: { name: 'Ada' } };
    const first = await mail.client.send('/v1/emails', body, { intentAt: intentNow(), key });
    expect(first).toMatchObject({ kind: 'ok', replayed: false, body: { to, template: 'welcome', status: 'sent' } });
    expect(await mail.client.send('/v1/emails', body, { intentAt: intentNow(), key })).toMatchObject({
      kind: 'ok',
      replayed: true,
    });
    const other = await mail.client.send(
      '/v1/emails',
      { ...body, vars: { name: 'Bob' } },
      { intentAt: intentNow(), key },
    );
    expect(other).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.ArgumentsMismatch });
    const sent = (await emailsOf()).emails.filter((e) => e.to === to);
    expect(sent).toEqual([expect.objectContaining({ subject: 'Welcome, Ada' })]);
    expect(await mail.client.stats(key)).toMatchObject({ dispatchCount: 3, businessEffectCount: 1 });
  });

  it('an unknown template, a missing variable and an unexpected variable are rejected and send nothing', async () => {
    const to = `${unique('u')}@example.com`;
    const cases: [string, Record<string, string>, string][] = [
      ['no-such-template', {}, 'Notifications.UnknownTemplate'],
      ['welcome', {}, 'Notifications.MissingVariable'],
      ['account-notice', { extra: 'x' }, 'Notifications.UnexpectedVariable'],
    ];
    for (const [template, vars, reason] of cases) {
      const out = await mail.client.send(
        '/v1/emails',
        { tenant: T, to, template, vars },
        { intentAt: intentNow(), key: opKey(template) },
      );
      expect(out).toMatchObject({ kind: 'rejected', status: 422, reason });
    }
    expect((await emailsOf()).emails.filter((e) => e.to === to)).toEqual([]);
  });

  it('a suppressed recipient is never emailed', async () => {
    const to = `${unique('bounced')}@example.com`;
    await mail.client.request('POST', '/admin/suppressions', { tenant: T, address: to.toUpperCase() });
    const body = { tenant: T, to, template: 'account-notice', vars: {} };
    const out = await mail.client.send('/v1/emails', body, { intentAt: intentNow(), key: opKey('suppressed') });
    expect(out).toMatchObject({ kind: 'rejected', status: 422, reason: 'Notifications.Suppressed' });
    expect((await emailsOf()).emails.filter((e) => e.to === to)).toEqual([]);
  });

  it('a second delivery of an event id is acknowledged without a second email', async () => {
    const orderId = unique('ord');
    const evt = event(orderId);
    const first = await mail.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId, fence: 1 });
    expect(first).toMatchObject({ kind: 'ok', replayed: false, body: { eventId: evt.eventId, status: 'consumed' } });
    const second = await mail.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId, fence: 1 });
    expect(second).toMatchObject({ kind: 'ok', replayed: true });
    const list = await emailsOf(orderId);
    expect(list.count).toBe(1);
    expect(list.emails[0]).toMatchObject({
      template: 'order-confirmation',
      eventId: evt.eventId,
      to: 'ada@example.com',
    });
    expect(await eventStats(evt.eventId)).toEqual({
      eventId: evt.eventId,
      deliveries: 2,
      emails: 1,
      consumed: true,
      acceptedFence: 1,
    });
  });

  it('a delivery whose fence is lower than one accepted for that event is refused as stale', async () => {
    const evt = event(unique('ord'));
    expect(
      await mail.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId, fence: 5 }),
    ).toMatchObject({ kind: 'ok' });
    const stale = await mail.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId, fence: 4 });
    expect(stale).toMatchObject({ kind: 'rejected', status: 409, code: DownstreamErrorCode.StaleFence });
    const newer = await mail.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId, fence: 6 });
    expect(newer).toMatchObject({ kind: 'ok', replayed: true });
    expect(await eventStats(evt.eventId)).toMatchObject({ deliveries: 3, emails: 1, acceptedFence: 6 });
  });

  it('a delivery whose Idempotency-Key is not its event id is refused before anything is recorded', async () => {
    const evt = event(unique('ord'));
    const out = await mail.client.send('/v1/events', evt, { intentAt: intentNow(), key: opKey('not-the-event') });
    expect(out).toMatchObject({ kind: 'rejected', status: 400, code: DownstreamErrorCode.BadRequest });
    expect(await eventStats(evt.eventId)).toMatchObject({ emails: 0, consumed: false });
  });

  it('the canonical body of notifications_send_email is accepted, with one email per key', async () => {
    const ctx = { tenant: T, principalId: 'user:test' };
    const local = unique('Grace');
    const args = notificationsSendEmail.args.parse({
      to: ` ${local}@Example.COM`.trim(),
      template: 'welcome',
      vars: { name: 'Grace\u0301 ' },
    });
    const canonical = notificationsSendEmail.canonicalize(args, ctx);
    expect(canonical).toEqual({
      tenant: T,
      to: `${local}@example.com`,
      template: 'welcome',
      vars: { name: 'Grac\u00e9' },
    });
    const key = opKey('declared');
    const sent = await mail.client.send(notificationsSendEmail.route!, canonical, { intentAt: intentNow(), key });
    expect(sent.kind === 'ok' && notificationsSendEmail.result.safeParse(sent.body).success).toBe(true);
    expect((await emailsOf()).emails.filter((e) => e.to === `${local}@example.com`)).toHaveLength(1);
  });
});

describe('event deduplication outlives the idempotency retention window', () => {
  it('a redelivery after the event id record was pruned is DuplicateEvent, still without a second email', async () => {
    const short = await sandbox.start('notifications', 'short.db', { retentionMs: 300 });
    const orderId = unique('ord');
    const evt = event(orderId);
    expect(await short.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId })).toMatchObject({
      kind: 'ok',
    });
    // A lookup prunes what is past its retention: poll until the event id's record is gone (300 ms after).
    await waitFor(async () => {
      const seen = await short.client.lookup(evt.eventId, { tenant: T });
      return seen.kind === 'found' && seen.record.pruned === true;
    });
    const late = await short.client.send('/v1/events', evt, { intentAt: intentNow(), key: evt.eventId });
    expect(late).toMatchObject({ kind: 'rejected', status: 422, reason: 'Notifications.DuplicateEvent' });
    const list = await short.client.request<EmailList>('GET', `/admin/emails?tenant=${T}&orderId=${orderId}`);
    expect(list.count).toBe(1);
  });
});

describe('capability verification comes with the shared service host', () => {
  it('with a capability key configured, an unsigned email request is refused with 403 and nothing is sent', async () => {
    const keyed = await sandbox.start('notifications', 'keyed.db', { trust: generateCapabilityTrust() });
    const to = `${unique('u')}@example.com`;
    const body = { tenant: T, to, template: 'account-notice', vars: {} };
    const key = opKey('unsigned');
    // A caller that holds no key: a client without a signer.
    const unsigned = new DownstreamClient({ baseUrl: keyed.proc.url });
    const out = await unsigned.send('/v1/emails', body, { intentAt: intentNow(), key });
    expect(out).toMatchObject({ kind: 'rejected', status: 403, code: 'Capability.Invalid' });
    expect(await keyed.client.lookup(key, { tenant: T })).toEqual({ kind: 'not_found', sealed: false });
    const list = await keyed.client.request<EmailList>('GET', `/admin/emails?tenant=${T}`);
    expect(list.count).toBe(0);
  });
});
