/**
 * Where cross-run rate limits keep their windows: a store the workers own, out of Temporal's reach.
 *
 * The windows used to live in a workflow per tenant (`ledgerloop-quota:<tenant>`), and anyone with namespace access
 * could terminate or reset that workflow: `temporal workflow terminate -w ledgerloop-quota:acme` emptied the windows,
 * and a limit of 2 let 5 debits through. A reset (a replay cut short) would forget reservations just as silently,
 * and no workflow can tell it was reset. So the state moved to a database only the workers hold credentials for:
 * SQLite on one host (the dev server, the demo, the tests) and PostgreSQL for several hosts (the cluster, compose).
 * Nothing a Temporal client can send touches it.
 *
 * The rules stay those of `QuotaWindows` (quota-window.ts), applied in one transaction per reservation: the tenant's
 * state is read under a lock, changed, and written back, so concurrent reservations of a tenant are serialized
 * and a window admits exactly its `max`. The time is the store's (SQLite's `julianday('now')` on the one host that
 * holds the file, PostgreSQL's `clock_timestamp()`): one clock for every worker, whatever their own clocks say.
 * A store that cannot be reached, or whose state cannot be read, refuses (`QuotaStoreUnavailable`): the activity
 * turns that into `Quota.Unavailable` and the call is not dispatched (fail closed) until the store is back.
 */
import { QuotaMemo } from './quota-memo';
import {
  QuotaWindows,
  type QuotaDecision,
  type QuotaWindowsSnapshot,
  type ReleaseResult,
  type ReserveQuotaInput,
} from '../policy/quota-window';

/** Environment variables: the shared PostgreSQL (wins), or the SQLite file of a single host. */
export const QUOTA_URL_ENV = 'LEDGERLOOP_QUOTA_URL';
export const QUOTA_DB_ENV = 'LEDGERLOOP_QUOTA_DB';

/** The store could not be reached or its state could not be read: nothing was decided (fail closed). */
export class QuotaStoreUnavailable extends Error {
  override readonly name = 'QuotaStoreUnavailable';
}

/** A store setting that cannot be used (a URL that is not postgres://, ...): the worker refuses to start. */
export class QuotaStoreConfigError extends Error {
  override readonly name = 'QuotaStoreConfigError';
}

/** What a backend does: run `step` on one tenant's state under that tenant's lock, at the store's time. */
export interface QuotaBackend {
  /** `sqlite` or `postgres`, for logs and docs. */
  readonly kind: string;
  /**
   * Reads the tenant's stored state as text (undefined: none yet) and the store's time in one transaction that holds
   * the tenant's lock, runs `step`, writes `next` back when `step` returns one, commits. Throws
   * QuotaStoreUnavailable. The text is checked by the store (`parseQuotaState`), not by the backend.
   */
  withTenant<T>(
    tenant: string,
    step: (stored: string | undefined, nowMs: number) => { readonly result: T; readonly next?: string },
  ): Promise<T>;
  close(): Promise<void>;
}

export interface QuotaUsage {
  readonly windows: readonly { readonly scope: string; readonly action: string; readonly inWindow: number }[];
  /** Admitted reservations still remembered (a repeat of one answers ok without counting). */
  readonly heldReservations: number;
}

/** Cross-run rate-limit windows per tenant, kept by a backend. */
export class QuotaStore {
  private readonly memo: QuotaMemo;

  /** `memoTenants`: how many tenants' last written states this store keeps live (src/stores/quota-memo.ts). */
  constructor(
    private readonly backend: QuotaBackend,
    opts: { readonly memoTenants?: number } = {},
  ) {
    this.memo = new QuotaMemo(opts.memoTenants);
  }

  get kind(): string {
    return this.backend.kind;
  }

  /** A slot in every window named, or none. Idempotent by `reservationId`. The caller's `nowMs` is ignored. */
  reserve(tenant: string, req: ReserveQuotaInput): Promise<QuotaDecision> {
    return this.backend.withTenant(tenant, (stored, now) => {
      const windows = this.windowsOf(tenant, stored);
      const result = windows.reserve(req, now);
      // A refusal holds nothing, but the pruning it did is worth keeping; a duplicate changed nothing but pruning.
      return { result, next: this.written(tenant, windows) };
    });
  }

  /** Gives back a reservation whose call was never sent; `released: false` when none was held. */
  release(tenant: string, reservationId: string): Promise<ReleaseResult> {
    return this.backend.withTenant(tenant, (stored, now) => {
      if (stored === undefined) return { result: { released: false } };
      const windows = this.windowsOf(tenant, stored);
      const result = windows.release(reservationId, now);
      return { result, next: this.written(tenant, windows) };
    });
  }

  /** The tenant's windows now, for an operator and for tests. */
  usage(tenant: string): Promise<QuotaUsage> {
    return this.backend.withTenant(tenant, (stored, now) => {
      const windows = this.windowsOf(tenant, stored);
      windows.prune(now);
      return { result: { windows: windows.usage(now), heldReservations: windows.heldCount } };
    });
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  /** The windows the stored text holds: the ones this store wrote as exactly that text, else the text parsed. */
  private windowsOf(tenant: string, stored: string | undefined): QuotaWindows {
    if (stored === undefined) return new QuotaWindows();
    return this.memo.take(tenant, stored) ?? new QuotaWindows(parseQuotaState(stored));
  }

  /** The text to write for `windows`, kept with them for the next transaction. */
  private written(tenant: string, windows: QuotaWindows): string {
    const text = windows.serialize();
    this.memo.keep(tenant, text, windows);
    return text;
  }
}

const isEntry = (e: unknown): boolean => {
  const r = e as Record<string, unknown> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r['id'] === 'string' &&
    typeof r['at'] === 'number' &&
    typeof r['until'] === 'number'
  );
};

/**
 * The stored state, checked: a row someone edited into something else refuses (QuotaStoreUnavailable) until an
 * operator rebuilds it (deleting the tenant's row resets its limits: docs/operations.md), never admits.
 */
export function parseQuotaState(text: string): QuotaWindowsSnapshot {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new QuotaStoreUnavailable('the stored quota state is not JSON: refusing until it is rebuilt');
  }
  const r = raw as Record<string, unknown> | null;
  const windows = r?.['windows'];
  const reservations = r?.['reservations'];
  const ok =
    typeof windows === 'object' &&
    windows !== null &&
    Object.values(windows).every((es) => Array.isArray(es) && es.every(isEntry)) &&
    typeof reservations === 'object' &&
    reservations !== null &&
    Object.values(reservations).every((h) => {
      const held = h as Record<string, unknown> | null;
      return (
        typeof held === 'object' &&
        held !== null &&
        Array.isArray(held['keys']) &&
        held['keys'].every((k) => typeof k === 'string') &&
        typeof held['forgetAt'] === 'number'
      );
    });
  if (!ok) throw new QuotaStoreUnavailable('the stored quota state has an unknown shape: refusing until it is rebuilt');
  return raw as QuotaWindowsSnapshot;
}
