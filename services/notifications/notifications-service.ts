/**
 * The notifications downstream service: sends emails (an irreversible effect) under the idempotency contract
 * of `src/downstream/protocol.ts`, and consumes the orders outbox's events, deduplicated by event id.
 *
 * Business routes: `POST /v1/emails`, `POST /v1/events` (consumer; `Idempotency-Key` = event id, `X-Fence` =
 * the outbox row's fence: a delivery with a lower fence than one accepted for that event is `Fence.Stale`).
 * Admin listener: `GET /admin/emails?tenant=&orderId=`, `GET /admin/events/:eventId`, `POST /admin/suppressions`.
 */
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { adminBodyRoute } from '../body-schemas';
import { EVENTS_ROUTE, EVENTS_SCOPE } from '../../src/capability/events-contract';
import { HttpError, json } from '../http-kit';
import { mutation } from '../idempotent-route';
import { startService, type RunningService, type ServiceDefinition, type ServiceHostOptions } from '../service-host';
import {
  applyEvent,
  applySendEmail,
  EventBody,
  eventStats,
  listEmails,
  migrateNotifications,
  SendEmailBody,
  suppress,
  SuppressionBody,
} from './emails';

/** The idempotency scope of sending an email. */
export const NOTIFICATIONS_EMAIL_SCOPE = 'notifications.email';
/** The idempotency scope of consuming an event (its key is the event id). */
export const NOTIFICATIONS_EVENT_SCOPE = EVENTS_SCOPE;

/** The notifications service: its tables and routes. */
export const notificationsDefinition: ServiceDefinition = {
  name: 'notifications',
  migrate: migrateNotifications,
  mutations: {
    '/v1/emails': mutation({ scope: NOTIFICATIONS_EMAIL_SCOPE, schema: SendEmailBody, apply: applySendEmail }),
    [EVENTS_ROUTE]: mutation({
      scope: NOTIFICATIONS_EVENT_SCOPE,
      schema: EventBody,
      precondition: (body, request) =>
        body.eventId === request.key ? undefined : 'Idempotency-Key must be the event id',
      apply: applyEvent,
    }),
  },
  adminRoutes(router, { db }) {
    router
      .on('GET', '/admin/emails', (c) => {
        const tenant = c.req.query('tenant');
        if (tenant === undefined || tenant === '')
          throw new HttpError(400, DownstreamErrorCode.BadRequest, 'tenant is required');
        const orderId = c.req.query('orderId');
        const emails = listEmails(db, tenant, orderId);
        return json(200, { tenant, ...(orderId === undefined ? {} : { orderId }), count: emails.length, emails });
      })
      .on('GET', '/admin/events/:eventId', (c) => json(200, eventStats(db, c.req.param('eventId') ?? '')))
      .on(
        'POST',
        '/admin/suppressions',
        adminBodyRoute(SuppressionBody, (body) => suppress(db, body), 201),
      );
  },
};

/** Starts the notifications service. */
export function createNotificationsService(options: ServiceHostOptions): Promise<RunningService> {
  return startService(notificationsDefinition, options);
}
