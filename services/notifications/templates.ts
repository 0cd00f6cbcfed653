/**
 * The notification templates the service can send, and their rendering. A template declares exactly which
 * variables it takes: a missing or an unexpected variable is a business rejection, never a guess.
 */
import { BusinessRejection } from '../idempotency-store';

/** Stable reasons of the template checks. */
export const TemplateReason = {
  UnknownTemplate: 'Notifications.UnknownTemplate',
  MissingVariable: 'Notifications.MissingVariable',
  UnexpectedVariable: 'Notifications.UnexpectedVariable',
} as const;

interface Template {
  readonly subject: string;
  readonly body: string;
  readonly vars: readonly string[];
}

/** The templates by name. */
export const TEMPLATES: Readonly<Record<string, Template>> = {
  'order-confirmation': {
    subject: 'Your order {{orderId}} is on its way',
    body: 'Good news: order {{orderId}} was fulfilled and will ship shortly.',
    vars: ['orderId'],
  },
  welcome: {
    subject: 'Welcome, {{name}}',
    body: 'Hello {{name}}, your account is ready.',
    vars: ['name'],
  },
  'account-notice': {
    subject: 'A notice about your account',
    body: 'Please review the recent activity on your account.',
    vars: [],
  },
};

/** A rendered email. */
export interface RenderedEmail {
  readonly subject: string;
  readonly body: string;
}

/** Renders `template` with `vars`, or throws a `BusinessRejection`. */
export function renderTemplate(template: string, vars: Readonly<Record<string, string>>): RenderedEmail {
  const t = Object.hasOwn(TEMPLATES, template) ? TEMPLATES[template] : undefined;
  if (t === undefined) throw new BusinessRejection(TemplateReason.UnknownTemplate, `no template ${template}`);
  const missing = t.vars.filter((v) => !Object.hasOwn(vars, v));
  if (missing.length > 0) {
    throw new BusinessRejection(TemplateReason.MissingVariable, `template ${template} needs ${missing.join(', ')}`, {
      missing,
    });
  }
  const unexpected = Object.keys(vars).filter((v) => !t.vars.includes(v));
  if (unexpected.length > 0) {
    throw new BusinessRejection(TemplateReason.UnexpectedVariable, `template ${template} takes no ${unexpected[0]}`, {
      unexpected,
    });
  }
  const fill = (text: string): string => text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => vars[name] ?? '');
  return { subject: fill(t.subject), body: fill(t.body) };
}
