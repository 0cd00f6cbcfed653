/**
 * Sliding-window quotas shared by every run of a tenant: the pure logic the quota store (quota-store.ts) applies
 * in one transaction per reservation, at the store's time. No I/O, no clock of its own: `now` is passed in, so the
 * same calls give the same state in the store and in a unit test.
 *
 * A window is kept per (scope, action), the scope being `tenant:<t>` or `principal:<p>`. A reservation asks for
 * a slot in one or more windows and gets all of them or none. An admitted reservation is remembered by its id, so
 * asking again (a retried activity, a re-authorized call) answers `ok` and never counts twice. A refusal holds
 * nothing and is not remembered: asking again later is how a caller waits for the window.
 */
import { z } from 'zod';
import { sharedValue } from '../tools/shared-declarations';
import type { RateLimit, RateLimitScope } from '../domain/policy-format';

export interface QuotaScopeRequest {
  /** `tenant:<tenant>` or `principal:<principal id>`. */
  readonly scope: string;
  readonly action: string;
  readonly max: number;
  readonly perMs: number;
}

export interface ReserveQuotaInput {
  /** One per logical call: `<run id>/<logical call id>` (`reservationIdFor`). */
  readonly reservationId: string;
  readonly scopes: readonly QuotaScopeRequest[];
  /**
   * The caller's clock, for diagnostics only: windows run on the quota store's time, so no caller can move a window
   * by sending a time.
   */
  readonly nowMs?: number;
}

export interface ReleaseQuotaInput {
  readonly reservationId: string;
}

export type QuotaDecision =
  | { readonly ok: true; readonly duplicate?: true }
  | { readonly ok: false; readonly retryAfterMs: number; readonly scope: string };

export interface ReleaseResult {
  /** False when no reservation of that id was held (never made, refused, expired or released already). */
  readonly released: boolean;
}

/** A window's key: unambiguous for any scope and action text. */
const keyOf = (s: Pick<QuotaScopeRequest, 'scope' | 'action'>): string => JSON.stringify([s.scope, s.action]);

/** What the quota activities accept: bounded sizes, one window per (scope, action) per request. */
export interface QuotaRequestSchemas {
  readonly reserve: z.ZodType<ReserveQuotaInput>;
  readonly release: z.ZodType<ReleaseQuotaInput>;
}

/**
 * The request schemas, built once per worker: the workflow bundle evaluates this module in every run (the agent
 * run imports its helpers), and schemas built at its top level were built each time.
 */
export const quotaRequestSchemas = (): QuotaRequestSchemas => sharedValue('quota-window/requests', buildSchemas);

function buildSchemas(): QuotaRequestSchemas {
  const id = z.string().min(1).max(300);
  const scope = z
    .object({
      scope: z.string().regex(/^(tenant|principal):.{1,200}$/s, 'scope must be tenant:<id> or principal:<id>'),
      action: z.string().min(1).max(100),
      max: z.number().int().positive().max(10_000),
      perMs: z.number().int().positive().max(86_400_000),
    })
    .strict();
  const reserve = z
    .object({
      reservationId: id,
      scopes: z
        .array(scope)
        .min(1)
        .max(8)
        .refine((ss) => new Set(ss.map(keyOf)).size === ss.length, 'each (scope, action) at most once per reservation'),
      nowMs: z.number().finite().optional(),
    })
    .strict();
  return { reserve, release: z.object({ reservationId: id }).strict() };
}

/** One admitted reservation in one window. `until`: when it leaves the window (at + perMs at admission). */
interface WindowEntry {
  readonly id: string;
  readonly at: number;
  readonly until: number;
}

/** What a reservation holds, to answer a repeat and to release it. */
interface HeldReservation {
  readonly keys: readonly string[];
  /** When the id is forgotten: the last of its windows' ends, and at least REMEMBER_MIN_MS after admission. */
  readonly forgetAt: number;
}

/** The whole state, plain JSON: one row per tenant in the quota store. */
export interface QuotaWindowsSnapshot {
  readonly windows: Readonly<Record<string, readonly WindowEntry[]>>;
  readonly reservations: Readonly<Record<string, HeldReservation>>;
}

/**
 * An admitted id is remembered at least this long, so a retry after a lost answer (activity attempts are seconds
 * apart) is recognised even where the window is shorter.
 */
export const REMEMBER_MIN_MS = 60_000;
/** Upper bound of entries the state may hold (about 100 bytes each): keeps the carried state far below 2 MB. */
export const MAX_ENTRIES = 10_000;
/** The pseudo-scope a refusal names when the state is full. */
export const CAPACITY_SCOPE = 'quota:capacity';

export class QuotaWindows {
  private readonly windows = new Map<string, WindowEntry[]>();
  private readonly reservations = new Map<string, HeldReservation>();
  /** Entries over all windows. */
  private entries = 0;
  /** Nothing expires before this: pruning is skipped until then (a reservation costs O(its windows), not O(state)). */
  private nextExpiry = Infinity;

  constructor(snapshot?: QuotaWindowsSnapshot) {
    for (const [k, es] of Object.entries(snapshot?.windows ?? {})) this.windows.set(k, [...es]);
    for (const [id, r] of Object.entries(snapshot?.reservations ?? {})) this.reservations.set(id, r);
    this.recount();
  }

  /** Admit on every scope or on none. `now`: the quota store's time. */
  reserve(req: ReserveQuotaInput, now: number): QuotaDecision {
    this.prune(now);
    if (this.reservations.has(req.reservationId)) return { ok: true, duplicate: true };
    let refusal: { retryAfterMs: number; scope: string } | undefined;
    for (const s of req.scopes) {
      const inWindow = (this.windows.get(keyOf(s)) ?? [])
        .filter((e) => e.at > now - s.perMs)
        .sort((a, b) => a.at - b.at);
      if (inWindow.length < s.max) continue;
      // The slot frees when the oldest entry that keeps the count at max leaves the window.
      const retryAfterMs = Math.max(1, inWindow[inWindow.length - s.max]!.at + s.perMs - now);
      if (!refusal || retryAfterMs > refusal.retryAfterMs) refusal = { retryAfterMs, scope: s.scope };
    }
    if (refusal) return { ok: false, ...refusal };
    if (this.entries + req.scopes.length > MAX_ENTRIES) {
      return { ok: false, retryAfterMs: Math.max(1, this.earliestExpiry() - now), scope: CAPACITY_SCOPE };
    }
    const keys: string[] = [];
    let forgetAt = now + REMEMBER_MIN_MS;
    for (const s of req.scopes) {
      const k = keyOf(s);
      const until = now + s.perMs;
      const es = this.windows.get(k);
      if (es) es.push({ id: req.reservationId, at: now, until });
      else this.windows.set(k, [{ id: req.reservationId, at: now, until }]);
      keys.push(k);
      forgetAt = Math.max(forgetAt, until);
      this.nextExpiry = Math.min(this.nextExpiry, until);
    }
    this.entries += keys.length;
    this.reservations.set(req.reservationId, { keys, forgetAt });
    this.nextExpiry = Math.min(this.nextExpiry, forgetAt);
    return { ok: true };
  }

  /** Give a held reservation back: its slots free at once and its id is forgotten. */
  release(reservationId: string, now: number): ReleaseResult {
    this.prune(now);
    const held = this.reservations.get(reservationId);
    if (!held) return { released: false };
    for (const k of held.keys)
      this.setWindow(
        k,
        (this.windows.get(k) ?? []).filter((e) => e.id !== reservationId),
      );
    this.reservations.delete(reservationId);
    this.recount();
    return { released: true };
  }

  /** Drop entries that have left their window and ids past their memory. */
  prune(now: number): void {
    if (now < this.nextExpiry) return;
    for (const [k, es] of this.windows)
      this.setWindow(
        k,
        es.filter((e) => e.until > now),
      );
    for (const [id, r] of this.reservations) if (r.forgetAt <= now) this.reservations.delete(id);
    this.recount();
  }

  /** Admitted reservations still in each window, for an operator. */
  usage(now: number): { scope: string; action: string; inWindow: number }[] {
    return [...this.windows].map(([k, es]) => {
      const [scope, action] = JSON.parse(k) as [string, string];
      return { scope, action, inWindow: es.filter((e) => e.until > now).length };
    });
  }

  /** How many admitted reservations are remembered. */
  get heldCount(): number {
    return this.reservations.size;
  }

  /** The state as the store writes it: `JSON.stringify(snapshot())` without copying every window first. */
  serialize(): string {
    return JSON.stringify({
      windows: Object.fromEntries(this.windows),
      reservations: Object.fromEntries(this.reservations),
    });
  }

  snapshot(): QuotaWindowsSnapshot {
    return {
      windows: Object.fromEntries([...this.windows].map(([k, es]) => [k, [...es]])),
      reservations: Object.fromEntries(this.reservations),
    };
  }

  private setWindow(k: string, es: WindowEntry[]): void {
    if (es.length === 0) this.windows.delete(k);
    else this.windows.set(k, es);
  }

  private recount(): void {
    this.entries = 0;
    this.nextExpiry = Infinity;
    for (const es of this.windows.values()) {
      this.entries += es.length;
      for (const e of es) this.nextExpiry = Math.min(this.nextExpiry, e.until);
    }
    for (const r of this.reservations.values()) this.nextExpiry = Math.min(this.nextExpiry, r.forgetAt);
  }

  private earliestExpiry(): number {
    let t = Infinity;
    for (const es of this.windows.values()) for (const e of es) t = Math.min(t, e.until);
    return t;
  }
}

/** One reservation per logical call of a run: a retry or a re-authorization of the same call reuses it. */
export function reservationIdFor(runId: string, logicalCallId: string): string {
  return `${runId}/${logicalCallId}`;
}

/** The cross-run windows a rule's limits ask for: `per: 'run'` limits stay in the run (no shared state). */
export function quotaScopesFor(
  limits: readonly RateLimit[],
  who: { readonly tenant: string; readonly principalId: string },
  action: string,
): QuotaScopeRequest[] {
  const scopeOf: Record<Exclude<RateLimitScope, 'run'>, string> = {
    principal: `principal:${who.principalId}`,
    tenant: `tenant:${who.tenant}`,
  };
  return limits.flatMap((l) =>
    l.per === 'run' ? [] : [{ scope: scopeOf[l.per], action, max: l.max, perMs: l.perMs }],
  );
}
