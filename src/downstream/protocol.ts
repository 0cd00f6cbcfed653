/**
 * The idempotency contract every Ledgerloop downstream service speaks over HTTP (Stripe-like, made stricter).
 *
 * A mutating request carries:
 *   - `Idempotency-Key`: the application-owned operation key of one business intent;
 *   - `X-Arguments-Hash`: SHA-256 of the RFC 8785 canonical JSON of the request body; the service recomputes it;
 *   - `X-Fence`: a monotonic fencing value for that key; a lower one than the highest accepted is refused;
 *   - `X-Intent-At`: when the caller recorded the intent (ISO 8601 with a zone), e.g. the ledger time of its
 *     `DispatchIntentRecorded`. Every attempt of one intent sends the same time, never the time of the attempt.
 *
 * Rules, decided in one SQLite transaction in the service:
 *   - same key, same arguments, completed  -> the retained result (`Idempotent-Replayed: true`), no new effect;
 *   - same key, same arguments, failed     -> the retained failure (terminal, recorded before any effect);
 *   - same key, same arguments, in progress -> 409 `Idempotency.InProgress` (wait or reconcile);
 *   - same key, other arguments            -> 409 `Idempotency.ArgumentsMismatch`, nothing recorded as an effect;
 *   - key sealed by a reconciliation lookup -> 409 `Idempotency.KeySealed` (a late request cannot commit after
 *     reconciliation decided "no effect");
 *   - keys are retained for a declared window (default 24 h) and then pruned; `GET /v1/contract` declares it;
 *     seals are never pruned (a sealed key stays sealed), nor is the effect log that answers lookups;
 *   - intent time older than the retention window -> 409 `Idempotency.IntentExpired`, nothing recorded: a request
 *     delayed past the window could otherwise commit under a key whose record (or its "no effect") was pruned;
 *   - intent time missing, unparseable or in the future (beyond a few minutes of clock skew) -> 400
 *     `Request.IntentTimeMissing` (fail closed: a request that cannot prove its age is not admitted).
 *
 * Reconciliation: `GET /v1/operations/:key?tenant=T` returns the tenant's record (receipt, result) or 404
 * `not_found`; `POST /v1/operations/:key/seal` with `{ "tenant": T }` also seals a missing key in the same
 * transaction, so "not found" stays true. Both need an `X-Capability` for exactly that key and tenant, with scope
 * `lookup:<service>` (GET) or `seal:<service>` (POST); `GET ...?seal=...` is refused (405 `Lookup.SealRequiresPost`).
 * Records are keyed by (tenant, operation key): one tenant never reads or seals another's.
 */

export const HEADER_KEY = 'idempotency-key';
export const HEADER_ARGS_HASH = 'x-arguments-hash';
export const HEADER_FENCE = 'x-fence';
export const HEADER_INTENT_AT = 'x-intent-at';
export const HEADER_REPLAYED = 'idempotent-replayed';
export const HEADER_RETAINED_UNTIL = 'idempotency-retained-until';

/** Stable error codes in a service's JSON error body `{ error: code, message, committed }`. */
export const DownstreamErrorCode = {
  ArgumentsMismatch: 'Idempotency.ArgumentsMismatch',
  InProgress: 'Idempotency.InProgress',
  KeySealed: 'Idempotency.KeySealed',
  StaleFence: 'Fence.Stale',
  /** The request's intent time is older than the retention window: refused, nothing recorded. */
  IntentExpired: 'Idempotency.IntentExpired',
  /** The request has no usable intent time (missing, unparseable, or in the future): refused, nothing recorded. */
  IntentTimeMissing: 'Request.IntentTimeMissing',
  ArgumentsHashInvalid: 'Request.ArgumentsHashInvalid',
  BadRequest: 'Request.Invalid',
  Unavailable: 'Downstream.Unavailable',
  Rejected: 'Downstream.Rejected',
  NotFound: 'not_found',
  /** A mutating, lookup or seal request without a capability for exactly it (403). */
  CapabilityInvalid: 'Capability.Invalid',
  /** `GET /v1/operations/:key?seal=...`: sealing changes state, so it is only a POST (405). */
  SealRequiresPost: 'Lookup.SealRequiresPost',
  /** An admin request without the admin bearer token (401). */
  AdminUnauthorized: 'Admin.Unauthorized',
  /** An admin request from a peer that is not loopback (403). */
  AdminNotLoopback: 'Admin.NotLoopback',
} as const;
export type DownstreamErrorCode = (typeof DownstreamErrorCode)[keyof typeof DownstreamErrorCode];

export interface DownstreamErrorBody {
  readonly error: DownstreamErrorCode | string;
  readonly message: string;
  /** Whether the service guarantees no business effect was committed for this request. */
  readonly committed: false;
}

/** What `GET /v1/operations/:key` returns: the service's idempotency record. */
export interface OperationRecord {
  readonly operationKey: string;
  readonly argumentsHash: string;
  readonly scope: string;
  readonly status: 'in_progress' | 'completed' | 'failed' | 'sealed';
  readonly receipt?: string;
  readonly result?: unknown;
  readonly error?: { readonly error: string; readonly message: string };
  readonly fence: number;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** The idempotency record was pruned; this was rebuilt from the effect log (receipt, no result). */
  readonly pruned?: boolean;
}

/** What `GET /admin/stats?key=K[&prefix=true]` (admin listener) returns, counted from the service's own database. */
export interface KeyStats {
  readonly key: string;
  readonly prefix: boolean;
  /**
   * Admitted requests under the key (or keys starting with it): valid, with a verified capability and a usable
   * intent time. Requests refused before the rules are only counted by code (`GET /admin/refusals`).
   */
  readonly dispatchCount: number;
  /** Business effects committed under the key (or keys starting with it). */
  readonly businessEffectCount: number;
}

/**
 * What `GET /admin/refusals` returns: requests refused before the idempotency rules, counted by code. Lookup, seal
 * and read refusals are counted under `lookup:<code>`, mutating requests' under `<code>`.
 */
export interface RefusalCounts {
  readonly total: number;
  /** Refused mutating requests. */
  readonly mutations: number;
  /** Refused lookups, seals and reads. */
  readonly lookups: number;
  readonly byCode: Readonly<Record<string, number>>;
}

/**
 * The `argumentsHash` claim of a lookup or seal capability. It is not a hex SHA-256, so a lookup capability can
 * never pass as a mutation's (whose hash the service recomputes from the body), and its scope differs too.
 */
export const LOOKUP_ARGUMENTS_HASH = 'lookup';

/** The capability scope of a lookup (`lookup:<service>`) or a seal (`seal:<service>`) at service `service`. */
export function lookupCapabilityScope(service: string, seal: boolean): string {
  return `${seal ? 'seal' : 'lookup'}:${service}`;
}

/**
 * The `argumentsHash` claim of a read capability (`GET /v1/<records>/:tenant/...`): like a lookup's, it is no
 * SHA-256, and the scope `read:<service>` is a read's alone. A read capability names the exact path it reads (as
 * its `operationKey`) and the tenant in that path: one record of one tenant, once.
 */
export const READ_ARGUMENTS_HASH = 'read';

/** The capability scope of a read of a record (`read:<service>`) at service `service`. */
export function readCapabilityScope(service: string): string {
  return `read:${service}`;
}

/**
 * Fault points a test or the fault protocol can arm on a lab start's admin listener with `POST /admin/faults`.
 * `before_commit` and `after_commit` apply to mutating requests; `seal` to seal requests
 * (`POST /v1/operations/:key/seal`), whose only action is `refuse_seal`: a missing key is answered
 * `not_found` with `sealed: false` and is NOT sealed (a downstream that will not seal).
 */
export type FaultPoint = 'before_commit' | 'after_commit' | 'seal';
export type FaultAction = 'drop_response' | 'delay' | 'error_5xx' | 'refuse_seal';
export interface FaultRule {
  readonly at: FaultPoint;
  readonly do: FaultAction;
  /** For `delay`: milliseconds to wait at the point before going on. */
  readonly ms?: number;
  /** Apply to the n-th matching request from now on (1 = the next one). Default 1. */
  readonly occurrence?: number;
  /** How many matching requests it applies to, starting at `occurrence`. Default 1. */
  readonly times?: number;
  /** Only requests to this route path (e.g. `/v1/debits`). Default: any mutating route. */
  readonly path?: string;
}

/** `GET /admin/faults`: every rule armed since the last clear, with how many requests it counted and acted on. */
export interface ArmedFaultState {
  readonly id: string;
  readonly rule: FaultRule;
  /** Matching requests counted since it was armed. */
  readonly seen: number;
  /** Requests it acted on (at most `times`). */
  readonly fired: number;
}

/** What `GET /v1/contract` returns: the service's declared idempotency contract. */
export interface ServiceContract {
  readonly service: string;
  /**
   * How long a key's record is retained after its first request. A request whose intent time is older than
   * this is refused (`Idempotency.IntentExpired`), so a pruned key can never commit a second time.
   */
  readonly idempotencyRetentionMs: number;
}

/** The 404 body of `GET /v1/operations/:key`; `sealed` means no request can commit under the key any more. */
export interface OperationNotFoundBody {
  readonly error: typeof DownstreamErrorCode.NotFound;
  readonly message: string;
  readonly sealed: boolean;
}

/** The 422 body of a business rejection (retained as the key's failed record). */
export interface RejectedBody extends DownstreamErrorBody {
  readonly error: typeof DownstreamErrorCode.Rejected;
  /** A stable service-specific reason such as `Wallet.InsufficientFunds`. */
  readonly reason: string;
}
