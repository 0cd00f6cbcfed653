/**
 * The ticketing tools, declared once: the workflow validates, canonicalizes and authorizes with them inside the
 * deterministic sandbox, and the worker's activities sign and dispatch with the same declarations. Pure code:
 * no I/O, no clock, no randomness. Loaded lazily by ./workflow-tools.ts, once per worker.
 */
import { z } from 'zod';
import {
  defineTool,
  nfc,
  normalizeText,
  OperationKeyRef,
  onResource,
  receiptResult,
  shortKey,
  sortedSet,
  TimeZone,
  ZonedDateTime,
  zonedTime,
} from 'ledgerloop/workflow-tools';

/** The service the tools act on, as the worker's `services` map names it. */
export const TICKETING_SERVICE = 'ticketing';
/** The effect scopes the operation keys protect; the service declares the same ones for its routes. */
export const OPEN_SCOPE = 'ticketing.open';
export const CANCEL_SCOPE = 'ticketing.cancel';
/** The reason the service gives when a cancellation names a ticket that was never opened. */
export const UNKNOWN_TICKET = 'Ticketing.UnknownTicket';

const ProjectId = z.string().regex(/^[a-z][a-z0-9-]{1,31}$/, 'a project id like ops or web-shop');
const Label = z.string().min(1).max(32);

export const openTicket = defineTool({
  name: 'ticketing_open_ticket',
  version: 1,
  description:
    'Open a support ticket in a project of the caller tenant. Proposing the same ticket again in this run is the same ticket, not a second one.',
  args: z
    .object({
      project: ProjectId,
      title: z.string().min(1).max(200),
      labels: z.array(Label).max(10).optional(),
      due: z.object({ at: ZonedDateTime, zone: TimeZone }).strict().optional(),
    })
    .strict(),
  result: receiptResult({
    ticketId: z.string(),
    project: z.string(),
    status: z.enum(['open', 'cancelled']),
  }),
  maxArgumentBytes: 4096,
  maxResultBytes: 8192,
  service: TICKETING_SERVICE,
  route: '/v1/tickets',
  effectScope: OPEN_SCOPE,
  idempotency: 'idempotent_by_key',
  // One intent, one form: the tenant from the principal (never from the model), NFC text with one space between
  // words, labels as a sorted set, the due time as a UTC instant plus the zone it is meant in.
  canonicalize: (args, ctx) => ({
    tenant: ctx.tenant,
    project: args.project,
    title: normalizeText(args.title),
    labels: sortedSet(args.labels ?? []),
    ...(args.due === undefined ? {} : { due: zonedTime(args.due.at, args.due.zone) }),
  }),
  authorization: (args, ctx) => onResource('ticketing.open', ctx.tenant, 'project', args.project),
  invariants: (args) => (nfc(args.title).length === 0 ? 'a ticket needs a title' : null),
  // Cancel by the opening's operation key: known before the opening is sent, so an UNKNOWN opening is covered.
  compensation: {
    kind: 'compensate',
    tool: 'ticketing_cancel_ticket',
    args: (fwd) => ({ project: fwd.args.project, ticketOperationKey: fwd.operationKey }),
  },
  summary: (args) => `ticketing_open_ticket ${args.project}: ${normalizeText(args.title).slice(0, 60)}`,
  promote: (r) => ({ receipt: r.receipt, ticketId: r.ticketId, project: r.project, status: r.status }),
});

export const cancelTicket = defineTool({
  name: 'ticketing_cancel_ticket',
  version: 1,
  description: 'Cancel a ticket opened in this run, named by the operation key that opened it. Used as a compensation.',
  args: z.object({ project: ProjectId, ticketOperationKey: OperationKeyRef }).strict(),
  result: receiptResult({ ticketId: z.string(), status: z.literal('cancelled') }),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: TICKETING_SERVICE,
  route: '/v1/cancellations',
  effectScope: CANCEL_SCOPE,
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({
    tenant: ctx.tenant,
    project: args.project,
    ticketOperationKey: args.ticketOperationKey,
  }),
  authorization: (args, ctx) => onResource('ticketing.cancel', ctx.tenant, 'project', args.project),
  compensation: { kind: 'none' },
  // "No such ticket" also sealed the opening's key at the service: an UNKNOWN opening settles as no effect.
  forwardAbsentReasons: [UNKNOWN_TICKET],
  summary: (args) => `ticketing_cancel_ticket ${args.project} ${shortKey(args.ticketOperationKey)}`,
  promote: (r) => ({ receipt: r.receipt, ticketId: r.ticketId, status: r.status }),
});

export const ticketingTools = [openTicket, cancelTicket] as const;
