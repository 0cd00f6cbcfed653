/**
 * Pure helpers of the HTTP API transport: dotted field paths into a JSON body, status matchers, path and query
 * templates, and `application/x-www-form-urlencoded` bodies with `a[b]` nesting (as Stripe reads them).
 */
import type { Json } from '../domain/canonical';
import type { StatusMatch } from '../domain/transport';

/** The value at a dotted path (`error.type`, `data`), or undefined. */
export function fieldAt(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function statusIn(status: number, s: StatusMatch['status']): boolean {
  return typeof s === 'number' ? status === s : status >= s[0] && status <= s[1];
}

/** Whether a response (status and parsed body) reads as `m`. */
export function matches(status: number, body: unknown, m: StatusMatch): boolean {
  if (!statusIn(status, m.status)) return false;
  if (m.field === undefined) return true;
  const value = fieldAt(body, m.field);
  if (m.equals === undefined) return value !== undefined;
  const wanted: readonly string[] = typeof m.equals === 'string' ? [m.equals] : m.equals;
  return typeof value === 'string' && wanted.includes(value);
}

export function matchesAny(status: number, body: unknown, ms: readonly StatusMatch[] | undefined): boolean {
  return (ms ?? []).some((m) => matches(status, body, m));
}

/** Whether `value` at `field` of `body` is one of `equals`. */
export function fieldIs(body: unknown, rule: { readonly field: string; readonly equals: string | readonly string[] }) {
  const value = fieldAt(body, rule.field);
  const wanted: readonly string[] = typeof rule.equals === 'string' ? [rule.equals] : rule.equals;
  return typeof value === 'string' && wanted.includes(value);
}

/** Thrown when a template names a variable the call does not have: the request is not sent. */
export class TemplateError extends Error {
  override readonly name = 'Http.TemplateInvalid';
}

/**
 * `{name}` replaced by `vars[name]` (a string or number), each passed through `encode`. A missing variable or one
 * of another type throws `TemplateError`: a request is never sent to a half-filled URL.
 */
export function fillTemplate(
  template: string,
  vars: Readonly<Record<string, unknown>>,
  encode: (value: string) => string = encodeURIComponent,
): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_.]*)\}/g, (_m, name: string) => {
    const value = name.includes('.') ? fieldAt(vars, name) : vars[name];
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new TemplateError(`the template ${JSON.stringify(template)} names {${name}}, which the call does not have`);
    return encode(String(value));
  });
}

/** A JSON object as a form body: nested objects as `a[b]`, arrays as `a[0]`, null as the empty string. */
export function formEncode(value: Json): string {
  const pairs: string[] = [];
  const walk = (prefix: string, v: Json): void => {
    if (v === null) pairs.push(`${encodeURIComponent(prefix)}=`);
    else if (Array.isArray(v)) v.forEach((item, i) => walk(`${prefix}[${i}]`, item));
    else if (typeof v === 'object')
      for (const [k, item] of Object.entries(v)) walk(prefix ? `${prefix}[${k}]` : k, item);
    else pairs.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(v))}`);
  };
  walk('', value);
  return pairs.join('&');
}
