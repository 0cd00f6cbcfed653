/**
 * Sessions and one-time sign-in codes, held in this process's memory only. The browser holds an opaque session id
 * in an HttpOnly, SameSite=Strict cookie; the person's identity token stays here (it is sent to Temporal on their
 * behalf) and never reaches the page. Each session has its own CSRF token, compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { VerifiedIdentity } from '../src/domain/verified-identity';

export const SESSION_COOKIE = 'll_console';
/** Before sign-in: the cookie half of the sign-in form's CSRF pair. */
export const PRE_SESSION_COOKIE = 'll_console_pre';
/** Longest session, whatever the token's own expiry (12 h). */
export const MAX_SESSION_MS = 12 * 3600_000;
/** How long a printed one-time sign-in code stays usable (12 h: the demo's tokens live as long). */
export const SIGN_IN_CODE_TTL_MS = 12 * 3600_000;

/** 32 random bytes, base64url: session ids, CSRF tokens, sign-in codes. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** Constant-time comparison of two strings (false when either is missing or they differ in length). */
export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== 'string' || typeof b !== 'string' || a === '' || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export interface Session {
  readonly id: string;
  readonly csrf: string;
  readonly person: VerifiedIdentity;
  /** The person's identity token: sent to Temporal on their behalf, never to the browser. */
  readonly token: string;
  readonly expiresAtMs: number;
}

export class Sessions {
  private readonly byId = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  create(person: VerifiedIdentity, token: string): Session {
    this.sweep();
    const tokenExpiry = Date.parse(person.expiresAt);
    const expiresAtMs = Math.min(this.now() + MAX_SESSION_MS, Number.isFinite(tokenExpiry) ? tokenExpiry : 0);
    const session: Session = { id: randomToken(), csrf: randomToken(), person, token, expiresAtMs };
    this.byId.set(session.id, session);
    return session;
  }

  /** The live session under `id`; an expired one is forgotten. */
  get(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const s = this.byId.get(id);
    if (s && s.expiresAtMs <= this.now()) {
      this.byId.delete(id);
      return undefined;
    }
    return s;
  }

  end(id: string | undefined): void {
    if (id !== undefined) this.byId.delete(id);
  }

  get size(): number {
    return this.byId.size;
  }

  private sweep(): void {
    const t = this.now();
    for (const [id, s] of this.byId) if (s.expiresAtMs <= t) this.byId.delete(id);
  }
}

/**
 * One-time codes for the dev sign-in links `npm start` prints: a code names a token held here; the console takes
 * it once, server-side, and redirects, so the token itself never appears in a URL.
 */
export class SignInCodes {
  private readonly codes = new Map<string, { token: string; expiresAtMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  issue(token: string, ttlMs = SIGN_IN_CODE_TTL_MS): string {
    const code = randomToken();
    this.codes.set(code, { token, expiresAtMs: this.now() + ttlMs });
    return code;
  }

  /** The token under `code`, once: the code is spent whether or not the token then verifies. */
  take(code: string | undefined): string | undefined {
    if (code === undefined) return undefined;
    const entry = this.codes.get(code);
    this.codes.delete(code);
    return entry && entry.expiresAtMs > this.now() ? entry.token : undefined;
  }
}
