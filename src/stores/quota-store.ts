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
   * Reads the tenant's state (undefined: none yet) and the store's time in one transaction that holds the tenant's
   * lock, runs `step`, writes `next` back when `step` returns one, commits. Throws QuotaStoreUnavailable.
   */
  withTenant<T>(
    tenant: string,
    step: (state: QuotaWindowsSnapshot | undefined, nowMs: number) => { readonly result: T; readonly next?: string },
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
  constructor(private readonly backend: QuotaBackend) {}

  get kind(): string {
    return this.backend.kind;
  }

  /** A slot in every window named, or none. Idempotent by `reservationId`. The caller's `nowMs` is ignored. */
  reserve(tenant: string, req: ReserveQuotaInput): Promise<QuotaDecision> {
    return this.backend.withTenant(tenant, (state, now) => {
      const windows = new QuotaWindows(state);
      const result = windows.reserve(req, now);
      // A refusal holds nothing, but the pruning it did is worth keeping; a duplicate changed nothing but pruning.
      return { result, next: JSON.stringify(windows.snapshot()) };
    });
  }

  /** Gives back a reservation whose call was never sent; `released: false` when none was held. */
  release(tenant: string, reservationId: string): Promise<ReleaseResult> {
    return this.backend.withTenant(tenant, (state, now) => {
      if (state === undefined) return { result: { released: false } };
      const windows = new QuotaWindows(state);
      const result = windows.release(reservationId, now);
      return { result, next: JSON.stringify(windows.snapshot()) };
    });
  }

  /** The tenant's windows now, for an operator and for tests. */
  usage(tenant: string): Promise<QuotaUsage> {
    return this.backend.withTenant(tenant, (state, now) => {
      const windows = new QuotaWindows(state);
      windows.prune(now);
      return { result: { windows: windows.usage(now), heldReservations: windows.heldCount } };
    });
  }

  close(): Promise<void> {
    return this.backend.close();
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
