/**
 * The page frame: who is signed in, the session's CSRF token for the script (bound to the HttpOnly session cookie,
 * worthless without it; the page carries no identity token and no session id), one stylesheet and one script
 * from this origin. Built with Hono's `html` template, which escapes every interpolated value.
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { VerifiedIdentity } from '../../src/domain/verified-identity';

export type Html = HtmlEscapedString;

/** Renders a template synchronously (none of ours awaits anything). */
export const str = (h: HtmlEscapedString | Promise<HtmlEscapedString>): Html => h as Html;

export function layout(o: {
  readonly title: string;
  readonly person?: VerifiedIdentity;
  readonly csrf?: string;
  readonly body: Html;
}): Html {
  const p = o.person;
  return str(
    html`<!doctype html>
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          ${o.csrf ? html`<meta name="csrf-token" content="${o.csrf}" />` : ''}
          <title>${o.title} · Ledgerloop console</title>
          <link rel="stylesheet" href="/static/console.css" />
          <script src="/static/console.js" defer></script>
        </head>
        <body>
          <header class="top">
            <a class="brand" href="/">Ledgerloop console</a>
            ${
              p
                ? html`<div class="who" data-testid="who">
                    <span class="principal">${p.principalId}</span>
                    <span class="tenant">${p.tenant}</span>
                    <span class="roles">${p.roles.length ? p.roles.join(', ') : 'no roles'}</span>
                    <form method="post" action="/sign-out" class="sign-out" data-plain="true">
                      <input type="hidden" name="csrf" value="${o.csrf ?? ''}" />
                      <button type="submit">Sign out</button>
                    </form>
                  </div>`
                : ''
            }
          </header>
          <main>${o.body}</main>
        </body>
      </html>`,
  );
}

/** "4 min", "2 h 5 min": how long ago `iso` was, from `nowMs`. */
export function age(iso: string, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ${m % 60} min` : `${Math.floor(h / 24)} d`;
}

/** "in 12 min" / "3 min ago" until `iso`. */
export function until(iso: string, nowMs: number): string {
  const ms = Date.parse(iso) - nowMs;
  if (!Number.isFinite(ms)) return '?';
  return ms >= 0 ? `in ${age(new Date(nowMs - ms).toISOString(), nowMs)}` : `${age(iso, nowMs)} ago`;
}

export const runHref = (workflowId: string, runId?: string): string =>
  `/runs/${encodeURIComponent(workflowId)}${runId ? `?run=${encodeURIComponent(runId)}` : ''}`;

export const ttlLabel = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;

export { html, raw };
