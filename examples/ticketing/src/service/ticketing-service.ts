/**
 * The ticketing downstream: a small HTTP service of the user's own, built on `ledgerloop/services`. The library
 * brings the idempotency contract (one effect per operation key; the same key with other arguments is 409
 * `Idempotency.ArgumentsMismatch`), fences, the capability check, lookups and seals; this file is only the
 * tickets table, two synchronous effects and one read.
 *
 *   POST /v1/tickets          open a ticket          (scope ticketing.open)
 *   POST /v1/cancellations    cancel it, by the key that opened it   (scope ticketing.cancel)
 *   GET  /v1/tickets/:tenant/:ticketId
 */
import { createHash } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import {
  BusinessRejection,
  ForwardOperationKey,
  Id,
  mutation,
  refuseMissingForward,
  startService,
  type AppliedEffect,
  type RunningService,
  type ServiceDefinition,
  type ServiceHostOptions,
} from 'ledgerloop/services';
import { CANCEL_SCOPE, OPEN_SCOPE, UNKNOWN_TICKET } from '../tools/ticketing.tools';

/** The body the worker sends: the tool's canonical form (strict: an unknown field is a 400). */
const OpenBody = z.strictObject({
  tenant: Id,
  project: Id,
  title: z.string().min(1).max(200),
  labels: z.array(z.string().min(1).max(32)).max(10),
  due: z.strictObject({ at: z.string(), zone: z.string() }).optional(),
});
type OpenBody = z.infer<typeof OpenBody>;

const CancelBody = z.strictObject({ tenant: Id, project: Id, ticketOperationKey: ForwardOperationKey });
type CancelBody = z.infer<typeof CancelBody>;

interface TicketRow {
  tenant: string;
  ticket_id: string;
  project: string;
  title: string;
  labels: string;
  due: string | null;
  status: 'open' | 'cancelled';
  open_key: string;
}

function migrate(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS tickets (
    tenant TEXT NOT NULL,
    ticket_id TEXT NOT NULL,
    project TEXT NOT NULL,
    title TEXT NOT NULL,
    labels TEXT NOT NULL,
    due TEXT,
    status TEXT NOT NULL,
    open_key TEXT NOT NULL,
    cancel_key TEXT,
    PRIMARY KEY (tenant, ticket_id),
    UNIQUE (tenant, open_key)
  )`);
}

/** The ticket id is derived from the operation key: the same key can only ever name one ticket. */
function ticketIdFor(tenant: string, key: string): string {
  return `tkt_${createHash('sha256').update(`${tenant}\n${key}`).digest('hex').slice(0, 16)}`;
}

function toTicket(row: TicketRow) {
  return {
    tenant: row.tenant,
    ticketId: row.ticket_id,
    project: row.project,
    title: row.title,
    labels: JSON.parse(row.labels) as string[],
    ...(row.due === null ? {} : { due: JSON.parse(row.due) as unknown }),
    status: row.status,
  };
}

/** A project that takes no new tickets: opening one there is a business refusal (422, retained under the key). */
export const ARCHIVED_PROJECT = 'archive';

/** Runs inside the idempotency store's commit transaction: the ticket and the key's record commit together. */
function openTicket(db: Database, body: OpenBody, key: string): AppliedEffect {
  if (body.project === ARCHIVED_PROJECT) {
    throw new BusinessRejection('Ticketing.ProjectArchived', `project ${body.project} takes no new tickets`);
  }
  const ticketId = ticketIdFor(body.tenant, key);
  db.prepare(
    `INSERT INTO tickets (tenant, ticket_id, project, title, labels, due, status, open_key)
     VALUES (?, ?, ?, ?, ?, ?, 'open', ?)`,
  ).run(
    body.tenant,
    ticketId,
    body.project,
    body.title,
    JSON.stringify(body.labels),
    body.due === undefined ? null : JSON.stringify(body.due),
    key,
  );
  const receipt = `rcpt_${ticketId}`;
  return { receipt, result: { receipt, tenant: body.tenant, ticketId, project: body.project, status: 'open' } };
}

/** A compensation: cancels the ticket opened under `ticketOperationKey`, once. */
function cancelTicket(db: Database, body: CancelBody, key: string): AppliedEffect {
  const row = db
    .prepare('SELECT * FROM tickets WHERE tenant = ? AND open_key = ?')
    .get(body.tenant, body.ticketOperationKey) as TicketRow | undefined;
  // Never opened (or still in progress): refuse, and seal the opening's key so it can no longer commit.
  if (row === undefined) refuseMissingForward(db, body.tenant, body.ticketOperationKey, UNKNOWN_TICKET, 'ticket');
  if (row.status === 'cancelled') {
    throw new BusinessRejection('Ticketing.AlreadyCancelled', `ticket ${row.ticket_id} is cancelled already`);
  }
  db.prepare(`UPDATE tickets SET status = 'cancelled', cancel_key = ? WHERE tenant = ? AND ticket_id = ?`).run(
    key,
    row.tenant,
    row.ticket_id,
  );
  const receipt = `rcpt_cancel_${row.ticket_id}`;
  return { receipt, result: { receipt, tenant: row.tenant, ticketId: row.ticket_id, status: 'cancelled' } };
}

export const ticketingService: ServiceDefinition = {
  name: 'ticketing',
  migrate,
  mutations: {
    '/v1/tickets': mutation({ scope: OPEN_SCOPE, schema: OpenBody, apply: openTicket }),
    '/v1/cancellations': mutation({ scope: CANCEL_SCOPE, schema: CancelBody, apply: cancelTicket }),
  },
  reads: {
    '/v1/tickets/:tenant/:ticketId': {
      get: (db, p) => {
        const row = db
          .prepare('SELECT * FROM tickets WHERE tenant = ? AND ticket_id = ?')
          .get(p['tenant'] ?? '', p['ticketId'] ?? '') as TicketRow | undefined;
        return row === undefined ? undefined : toTicket(row);
      },
      notFound: 'no such ticket',
    },
  },
};

/** Starts the ticketing service (fail closed: without `capabilityKeys` or LEDGERLOOP_CAPABILITY_KEYS it refuses). */
export function startTicketingService(options: ServiceHostOptions): Promise<RunningService> {
  return startService(ticketingService, options);
}
