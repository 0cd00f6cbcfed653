/**
 * The checks every request passes before a route sees it: a Host the console serves (no DNS rebinding), security
 * headers (a CSP with no inline script, no framing, no referrer, no caching), and for every request that changes
 * state an Origin that is the console's own (and no cross-site `Sec-Fetch-Site`) plus the session's CSRF token in
 * the `X-CSRF-Token` header (a sign-in form: the pre-session cookie's value in the form).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { ConsoleRefusal, refusal, type Refusal } from './refusal';
import { SESSION_COOKIE, sameSecret, type Session, type Sessions } from './session';

export type ConsoleEnv = { Variables: { session: Session | undefined } };

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function sendRefusal(c: Context, r: Refusal): Response {
  return c.json({ ok: false, type: r.type, message: r.message }, r.status);
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Host check and security headers, for every request. */
export function baseGuard(allowedHosts: ReadonlySet<string>): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const host = (c.req.header('host') ?? '').toLowerCase();
    if (!allowedHosts.has(host))
      return sendRefusal(
        c,
        refusal(403, ConsoleRefusal.HostRefused, `this console does not serve host ${host.slice(0, 100) || '(none)'}`),
      );
    await next();
    c.header('Content-Security-Policy', CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cross-Origin-Opener-Policy', 'same-origin');
    c.header('Cache-Control', 'no-store');
  };
}

/** Why a state-changing request's origin is refused, or undefined when it is the console's own. */
export function originProblem(
  headers: { origin?: string | undefined; secFetchSite?: string | undefined },
  allowedOrigins: ReadonlySet<string>,
): string | undefined {
  const site = headers.secFetchSite;
  if (site !== undefined && site !== 'same-origin') return `a ${site} request may not change anything here`;
  if (headers.origin === undefined || headers.origin === '' || headers.origin === 'null')
    return 'a request that changes state must name its Origin';
  if (!allowedOrigins.has(headers.origin.toLowerCase()))
    return `origin ${headers.origin.slice(0, 100)} is not this console`;
  return undefined;
}

/** Origin check for every request that is not GET or HEAD. */
export function originGuard(allowedOrigins: ReadonlySet<string>): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    if (!SAFE_METHODS.has(c.req.method)) {
      const problem = originProblem(
        { origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site') },
        allowedOrigins,
      );
      if (problem) return sendRefusal(c, refusal(403, ConsoleRefusal.OriginRefused, problem));
    }
    await next();
  };
}

/** Loads the session named by the cookie (or none) into `c.var.session`. */
export function loadSession(sessions: Sessions): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    c.set('session', sessions.get(getCookie(c, SESSION_COOKIE)));
    await next();
  };
}

/** For the API: a session, and on a state-changing request its CSRF token in `X-CSRF-Token`. */
export const requireSession: MiddlewareHandler<ConsoleEnv> = async (c, next) => {
  const session = c.get('session');
  if (!session) return sendRefusal(c, refusal(401, ConsoleRefusal.SignInRequired, 'sign in first'));
  if (!SAFE_METHODS.has(c.req.method) && !sameSecret(c.req.header('x-csrf-token'), session.csrf))
    return sendRefusal(c, refusal(403, ConsoleRefusal.CsrfInvalid, 'the request carries no valid CSRF token'));
  await next();
};
