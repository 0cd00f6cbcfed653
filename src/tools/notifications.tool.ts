/** The notification service's tool: send one templated email. Irreversible, so always approved by a human. */
import { z } from 'zod';
import { defineTool } from '../domain/tool';
import { normalizeText, receiptResult } from './common';

const EmailAddress = z
  .string()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an email address');
const TemplateVars = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/), z.string().max(500))
  .refine((vars) => Object.keys(vars).length <= 20, { message: 'at most 20 variables' });

/** The canonical address: NFC, trimmed, domain in lower case (the local part may be case-sensitive). */
function canonicalAddress(address: string): string {
  const text = address.normalize('NFC').trim();
  const at = text.lastIndexOf('@');
  return `${text.slice(0, at)}@${text.slice(at + 1).toLowerCase()}`;
}

/** `a***@example.com`: enough for an operator to recognize, not a full address in every UI. */
function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, 1)}***${address.slice(at)}`;
}

export const notificationsSendEmail = defineTool({
  name: 'notifications_send_email',
  version: 1,
  description: 'Send a templated email to a recipient on behalf of the caller tenant. Cannot be unsent.',
  args: z
    .object({ to: EmailAddress, template: z.string().regex(/^[a-z][a-z0-9-]{0,63}$/), vars: TemplateVars })
    .strict(),
  result: receiptResult({
    template: z.string(),
    status: z.literal('sent'),
  }),
  maxArgumentBytes: 16_384,
  maxResultBytes: 4096,
  service: 'notifications',
  route: '/v1/emails',
  effectScope: 'notifications.email',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({
    tenant: ctx.tenant,
    to: canonicalAddress(args.to),
    template: args.template,
    vars: Object.fromEntries(
      Object.keys(args.vars)
        .sort()
        .map((name) => [name, normalizeText(args.vars[name] ?? '')]),
    ),
  }),
  authorization: (args, ctx) => ({
    action: 'notifications.send_email',
    resource: `${ctx.tenant}/recipient/${canonicalAddress(args.to)}`,
    resourceTenant: ctx.tenant,
  }),
  compensation: { kind: 'irreversible' },
  approval: () => 'an email cannot be unsent',
  summary: (args) => `notifications_send_email ${args.template} to ${maskAddress(canonicalAddress(args.to))}`,
  promote: (r) => ({ receipt: r.receipt, template: r.template, status: r.status }),
});

export const notificationsTools = [notificationsSendEmail] as const;
