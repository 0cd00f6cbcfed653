/**
 * The notification service's business data: sent emails (the effect, irreversible), suppressed recipients,
 * and consumed events. `POST /v1/emails` sends one email per operation key; `POST /v1/events` consumes an
 * `OrderFulfilled` event (key = event id) and sends its confirmation email once per event id, durably: the
 * `consumed_events` table outlives the idempotency record's retention window.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { Id } from '../body-schemas';
import { DUPLICATE_EVENT_REASON } from '../../src/capability/events-contract';
import { BusinessRejection, type AppliedEffect } from '../idempotency-store';
import { renderTemplate } from './templates';

/** Stable reasons of the notification service's own 422 rejections (see also `TemplateReason`). */
export const NotificationsReason = {
  Suppressed: 'Notifications.Suppressed',
  DuplicateEvent: DUPLICATE_EVENT_REASON,
} as const;

const EmailAddress = z
  .string()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an email address');
const VarName = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/);

/** Body of `POST /v1/emails`. */
export const SendEmailBody = z.strictObject({
  tenant: Id,
  to: EmailAddress,
  template: z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'a template name'),
  vars: z
    .record(VarName, z.string().max(500))
    .refine((v) => Object.keys(v).length <= 20, { message: 'at most 20 variables' }),
});
export type SendEmailBody = z.infer<typeof SendEmailBody>;

/** Body of `POST /v1/events` (the relay's delivery); the request's `Idempotency-Key` must be the event id. */
export const EventBody = z.strictObject({
  eventId: z.string().regex(/^evt_[0-9a-f]{40}$/, 'an event id'),
  type: z.literal('OrderFulfilled'),
  tenant: Id,
  orderId: Id,
  customerEmail: EmailAddress,
  fulfilledAt: z.iso.datetime(),
  sourceOperationKey: z.string().min(1).max(255),
});
export type EventBody = z.infer<typeof EventBody>;

/** Body of `POST /admin/suppressions`: a recipient that must never be emailed (bounced, unsubscribed). */
export const SuppressionBody = z.strictObject({ tenant: Id, address: EmailAddress });
export type SuppressionBody = z.infer<typeof SuppressionBody>;

/** One sent email as the admin listing returns it. */
export interface SentEmail {
  readonly receipt: string;
  readonly tenant: string;
  readonly to: string;
  readonly template: string;
  readonly subject: string;
  readonly eventId: string | null;
  readonly orderId: string | null;
  readonly sentAt: string;
}

/** Creates the notification tables if they do not exist. */
export function migrateNotifications(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS sent_emails (
      receipt       TEXT PRIMARY KEY,
      operation_key TEXT NOT NULL,
      tenant        TEXT NOT NULL,
      recipient     TEXT NOT NULL,
      template      TEXT NOT NULL,
      vars_json     TEXT NOT NULL,
      subject       TEXT NOT NULL,
      body          TEXT NOT NULL,
      event_id      TEXT UNIQUE,
      order_id      TEXT,
      sent_at       INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS sent_emails_order ON sent_emails (tenant, order_id);
    CREATE TABLE IF NOT EXISTS consumed_events (
      event_id      TEXT PRIMARY KEY,
      type          TEXT NOT NULL,
      tenant        TEXT NOT NULL,
      email_receipt TEXT,
      consumed_at   INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS suppressions (
      tenant  TEXT NOT NULL,
      address TEXT NOT NULL,
      PRIMARY KEY (tenant, address)
    );
  `);
}

/** Adds a suppressed recipient (admin). */
export function suppress(db: Database, body: SuppressionBody): SuppressionBody {
  db.prepare('INSERT OR IGNORE INTO suppressions (tenant, address) VALUES (?, ?)').run(
    body.tenant,
    body.address.toLowerCase(),
  );
  return body;
}

/** Sends (records) one email; rejects unknown templates, bad variables and suppressed recipients. */
export function applySendEmail(db: Database, body: SendEmailBody, key: string): AppliedEffect {
  const receipt = sendEmail(db, key, body, {});
  return { receipt, result: { receipt, tenant: body.tenant, to: body.to, template: body.template, status: 'sent' } };
}

/**
 * Consumes an `OrderFulfilled` event: sends the order confirmation once per event id. An event id consumed
 * before (its idempotency record since pruned) is `Notifications.DuplicateEvent`, which the relay treats as
 * delivered.
 */
export function applyEvent(db: Database, body: EventBody, key: string): AppliedEffect {
  const seen = db.prepare('SELECT email_receipt FROM consumed_events WHERE event_id = ?').get(body.eventId) as
    { email_receipt: string | null } | undefined;
  if (seen !== undefined) {
    throw new BusinessRejection(NotificationsReason.DuplicateEvent, `event ${body.eventId} was consumed before`, {
      emailReceipt: seen.email_receipt,
    });
  }
  const email = { tenant: body.tenant, to: body.customerEmail, template: 'order-confirmation' };
  const emailReceipt = sendEmail(db, key, { ...email, vars: { orderId: body.orderId } }, body);
  db.prepare(
    'INSERT INTO consumed_events (event_id, type, tenant, email_receipt, consumed_at) VALUES (?, ?, ?, ?, ?)',
  ).run(body.eventId, body.type, body.tenant, emailReceipt, Date.now());
  const result = { eventId: body.eventId, status: 'consumed', emailReceipt };
  return { receipt: emailReceipt, result };
}

/** The emails of a tenant (and order), oldest first. */
export function listEmails(db: Database, tenant: string, orderId?: string): SentEmail[] {
  const where = orderId === undefined ? 'tenant = ?' : 'tenant = ? AND order_id = ?';
  const params = orderId === undefined ? [tenant] : [tenant, orderId];
  const rows = db
    .prepare(
      `SELECT receipt, tenant, recipient, template, subject, event_id, order_id, sent_at FROM sent_emails
       WHERE ${where} ORDER BY rowid`,
    )
    .all(...params) as {
    receipt: string;
    tenant: string;
    recipient: string;
    template: string;
    subject: string;
    event_id: string | null;
    order_id: string | null;
    sent_at: number;
  }[];
  return rows.map((r) => ({
    receipt: r.receipt,
    tenant: r.tenant,
    to: r.recipient,
    template: r.template,
    subject: r.subject,
    eventId: r.event_id,
    orderId: r.order_id,
    sentAt: new Date(r.sent_at).toISOString(),
  }));
}

/** Delivery evidence of one event id: deliveries received (every request under the key) and emails sent. */
export function eventStats(db: Database, eventId: string): Record<string, unknown> {
  const n = (sql: string): number => (db.prepare(sql).get(eventId) as { n: number }).n;
  const record = db.prepare('SELECT fence FROM idem_records WHERE operation_key = ?').get(eventId) as
    { fence: number } | undefined;
  return {
    eventId,
    deliveries: n('SELECT count(*) AS n FROM idem_requests WHERE operation_key = ?'),
    emails: n('SELECT count(*) AS n FROM sent_emails WHERE event_id = ?'),
    consumed: n('SELECT count(*) AS n FROM consumed_events WHERE event_id = ?') === 1,
    acceptedFence: record?.fence ?? null,
  };
}

function sendEmail(
  db: Database,
  key: string,
  email: SendEmailBody,
  origin: { readonly eventId?: string; readonly orderId?: string },
): string {
  const rendered = renderTemplate(email.template, email.vars);
  const suppressed = db
    .prepare('SELECT 1 FROM suppressions WHERE tenant = ? AND address = ?')
    .get(email.tenant, email.to.toLowerCase());
  if (suppressed !== undefined) {
    throw new BusinessRejection(NotificationsReason.Suppressed, 'the recipient is suppressed');
  }
  const receipt = `em_${randomUUID()}`;
  db.prepare(
    `INSERT INTO sent_emails
       (receipt, operation_key, tenant, recipient, template, vars_json, subject, body, event_id, order_id, sent_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    receipt,
    key,
    email.tenant,
    email.to,
    email.template,
    JSON.stringify(email.vars),
    rendered.subject,
    rendered.body,
    origin.eventId ?? null,
    origin.orderId ?? null,
    Date.now(),
  );
  return receipt;
}
