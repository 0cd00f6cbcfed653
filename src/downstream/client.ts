/**
 * Typed HTTP client of a Ledgerloop downstream service (global `fetch`, i.e. undici on Node 20).
 *
 * `send` and `lookup` never throw for HTTP or network outcomes: they return discriminated unions (see
 * `classify.ts`). The client never retries: Temporal is the only retry owner. Admin helpers (test and demo
 * plumbing) go to the service's admin listener (`admin` option: its loopback URL and bearer token) and throw
 * `DownstreamAdminError` on any failure.
 */
import { CAPABILITY_HEADER } from '../policy/capability';
import { hashCanonical } from '../domain/canonical';
import { classifyHttpResponse, classifyTransportError, type SendOutcome } from './classify';
import {
  HEADER_ARGS_HASH,
  HEADER_FENCE,
  HEADER_INTENT_AT,
  HEADER_KEY,
  HEADER_REPLAYED,
  LOOKUP_ARGUMENTS_HASH,
  READ_ARGUMENTS_HASH,
  type ArmedFaultState,
  type FaultRule,
  type KeyStats,
  type OperationRecord,
  type RefusalCounts,
  type ServiceContract,
} from './protocol';

export { classifyHttpResponse, classifyTransportError, type SendOutcome, type TransportFailure } from './classify';

/** Default per-request timeout of the client. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Options of `DownstreamClient`. */
export interface DownstreamClientOptions {
  /** e.g. `http://127.0.0.1:4100` (no trailing path). */
  readonly baseUrl: string;
  /** Per-request timeout; a timeout after sending is `response_lost`. Default 10 s. */
  readonly timeoutMs?: number;
  /**
   * The service's admin listener (`spawnService` returns `adminUrl` and `adminToken`), used by the admin helpers
   * (`stats`, `refusals`, `armFault`, `clearFaults`, `seedAccount`, `request` on `/admin/...`). Default none: they
   * throw `DownstreamAdminError`.
   */
  readonly admin?: { readonly baseUrl: string; readonly token: string };
  /**
   * Signs a capability for a request that was given none (test, demo and lab plumbing that holds the key).
   * Default none: a request without a capability is sent without one (and refused by a verifying service).
   */
  readonly signer?: CapabilitySigner;
}

/** What a `CapabilitySigner` is asked to sign: a mutation (its path and body hash), a lookup, a seal or a read. */
export interface CapabilitySignRequest {
  readonly kind: 'mutation' | 'lookup' | 'seal' | 'read';
  /** The route path, e.g. `/v1/debits` (mutations), `/v1/operations/<key>`, or the record read (`/v1/accounts/acme/a1`). */
  readonly path: string;
  readonly key: string;
  readonly argumentsHash: string;
  readonly tenant: string;
}

/** Signs a capability for exactly one request, or returns undefined. */
export type CapabilitySigner = (req: CapabilitySignRequest) => string | undefined;

/** Options of `lookup`. */
export interface LookupOptions {
  /** The tenant whose record is asked for; records are per tenant. */
  readonly tenant: string;
  /** Seal a missing key (`POST /v1/operations/:key/seal`) so it stays missing. Default false. */
  readonly seal?: boolean;
  /** A capability for exactly this lookup or seal (scope `lookup:<service>` / `seal:<service>`). */
  readonly capability?: string;
  readonly signal?: AbortSignal;
}

/** Per-call options of `send`. */
export interface SendOptions {
  /** The operation key (`Idempotency-Key`). */
  readonly key: string;
  /** SHA-256 of the canonical body; default `hashCanonical(body)`. */
  readonly argumentsHash?: string;
  /** Fencing value (`X-Fence`); default 0. */
  readonly fence?: number;
  /**
   * When the intent was recorded (`X-Intent-At`, ISO 8601), the same for every attempt of one intent. Required:
   * the downstream refuses a request without it, and one older than its retention window (`IntentExpired`).
   */
  readonly intentAt: string;
  /** Caller cancellation (e.g. Temporal activity cancellation). */
  readonly signal?: AbortSignal;
  /** The signed capability for exactly this call (`X-Capability`). */
  readonly capability?: string;
}

/** Outcome of `lookup`. `sealed` says a late request under the key can no longer commit. */
export type LookupOutcome =
  | { readonly kind: 'found'; readonly record: OperationRecord }
  | { readonly kind: 'not_found'; readonly sealed: boolean }
  /** The service refused the lookup itself (403 `Capability.Invalid`, 400, 405): retrying will not help. */
  | { readonly kind: 'refused'; readonly status: number; readonly code: string; readonly reason: string }
  | { readonly kind: 'unreachable'; readonly reason: string };

/** Seed of a wallet account (`POST /admin/accounts`). */
export interface AccountSeed {
  readonly tenant: string;
  readonly account: string;
  readonly balanceMinor: number;
  readonly currency: string;
  /** Holder-controlled free text the wallet echoes in debit results (untrusted content). */
  readonly note?: string;
}

/** An admin call failed (any non-2xx status or transport error). */
export class DownstreamAdminError extends Error {
  override readonly name = 'DownstreamAdminError';
}

/** Client of one downstream service. */
export class DownstreamClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  private readonly adminTarget: { readonly baseUrl: string; readonly token: string } | undefined;
  private readonly signer: CapabilitySigner | undefined;

  constructor(options: DownstreamClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.adminTarget =
      options.admin === undefined
        ? undefined
        : { baseUrl: options.admin.baseUrl.replace(/\/+$/, ''), token: options.admin.token };
    this.signer = options.signer;
  }

  /** POSTs `body` to `path` under the idempotency headers and classifies the outcome. One attempt, no retry. */
  async send(path: string, body: unknown, options: SendOptions): Promise<SendOutcome> {
    if (options.signal?.aborted === true) return { kind: 'unavailable', reason: 'cancelled before sending' };
    let text: string;
    let argumentsHash: string;
    try {
      text = JSON.stringify(body);
      argumentsHash = options.argumentsHash ?? hashCanonical(body);
    } catch (err) {
      return { kind: 'unavailable', reason: `body not sent, not serializable: ${String(err)}` };
    }
    const tenant = (body as { tenant?: unknown } | null)?.tenant;
    const capability =
      options.capability ??
      this.signer?.({
        kind: 'mutation',
        path,
        key: options.key,
        argumentsHash,
        tenant: typeof tenant === 'string' ? tenant : '',
      });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [HEADER_KEY]: options.key,
      [HEADER_ARGS_HASH]: argumentsHash,
      [HEADER_FENCE]: String(options.fence ?? 0),
      [HEADER_INTENT_AT]: options.intentAt,
      ...(capability !== undefined ? { [CAPABILITY_HEADER]: capability } : {}),
    };
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        method: 'POST',
        headers,
        body: text,
        redirect: 'manual',
        signal: this.signal(options.signal),
      });
    } catch (err) {
      if (isAborted(options.signal)) {
        // The caller gave up while the request was in flight: it may have been received and applied.
        return {
          kind: 'response_lost',
          reason: `cancelled by the caller in flight: ${String(options.signal?.reason)}`,
        };
      }
      return classifyTransportError(err);
    }
    let parsed: unknown;
    try {
      parsed = parseJson(await response.text());
    } catch (err) {
      // Headers arrived but the body did not: whatever the status, the outcome is unknown.
      const lost = classifyTransportError(err);
      return { kind: 'response_lost', reason: `${response.status} body lost: ${lost.reason}` };
    }
    return classifyHttpResponse(response.status, parsed, response.headers.get(HEADER_REPLAYED) === 'true');
  }

  /**
   * Reconciliation: the tenant's record under `key` (`GET /v1/operations/:key?tenant=`); with `seal`, a missing
   * key is sealed so it stays missing (`POST /v1/operations/:key/seal`). Needs a capability for exactly this
   * key, tenant and lookup/seal (given, or from the client's signer).
   */
  async lookup(key: string, options: LookupOptions): Promise<LookupOutcome> {
    const seal = options.seal === true;
    const path = `/v1/operations/${encodeURIComponent(key)}`;
    const capability =
      options.capability ??
      this.signer?.({
        kind: seal ? 'seal' : 'lookup',
        path,
        key,
        argumentsHash: LOOKUP_ARGUMENTS_HASH,
        tenant: options.tenant,
      });
    const headers: Record<string, string> = capability === undefined ? {} : { [CAPABILITY_HEADER]: capability };
    let status: number;
    let body: unknown;
    try {
      const response = seal
        ? await fetch(`${this.baseUrl}${path}/seal`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ tenant: options.tenant }),
            signal: this.signal(options.signal),
            redirect: 'manual',
          })
        : await fetch(`${this.baseUrl}${path}?tenant=${encodeURIComponent(options.tenant)}`, {
            headers,
            signal: this.signal(options.signal),
            redirect: 'manual',
          });
      status = response.status;
      body = parseJson(await response.text());
    } catch (err) {
      return { kind: 'unreachable', reason: classifyTransportError(err).reason };
    }
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (status === 200 && typeof fields['operationKey'] === 'string') {
      const record = body as OperationRecord;
      return record.status === 'sealed' ? { kind: 'not_found', sealed: true } : { kind: 'found', record };
    }
    if (status === 404 && fields['error'] === 'not_found')
      return { kind: 'not_found', sealed: fields['sealed'] === true };
    if ((status === 400 || status === 403 || status === 405) && typeof fields['error'] === 'string') {
      return { kind: 'refused', status, code: fields['error'], reason: String(fields['message'] ?? fields['error']) };
    }
    return { kind: 'unreachable', reason: `lookup answered ${status}: ${JSON.stringify(body ?? null).slice(0, 200)}` };
  }

  /** `GET /v1/contract`: the declared idempotency retention. */
  contract(): Promise<ServiceContract> {
    return this.call<ServiceContract>('GET', '/v1/contract');
  }

  /** `GET /admin/refusals` (admin listener): requests refused before the idempotency rules, by code. */
  refusals(): Promise<RefusalCounts> {
    return this.admin<RefusalCounts>('GET', '/admin/refusals');
  }

  /** `GET /admin/stats` (admin listener): admitted-request and effect counts under a key (or key prefix). */
  stats(key: string, options: { readonly prefix?: boolean } = {}): Promise<KeyStats> {
    const prefix = options.prefix === true ? '&prefix=true' : '';
    return this.admin<KeyStats>('GET', `/admin/stats?key=${encodeURIComponent(key)}${prefix}`);
  }

  /** `POST /admin/faults`: arms a fault rule; resolves with its id. */
  armFault(rule: FaultRule): Promise<{ id: string }> {
    return this.admin<{ id: string }>('POST', '/admin/faults', rule);
  }

  /** `GET /admin/faults`: every rule armed since the last clear, with how often it fired. */
  async faultStates(): Promise<readonly ArmedFaultState[]> {
    return (await this.admin<{ rules: ArmedFaultState[] }>('GET', '/admin/faults')).rules;
  }

  /** `DELETE /admin/faults`: disarms every fault rule. */
  async clearFaults(): Promise<void> {
    await this.admin('DELETE', '/admin/faults');
  }

  /** `POST /admin/accounts` (wallet): creates or resets an account balance. */
  seedAccount(seed: AccountSeed): Promise<unknown> {
    return this.admin('POST', '/admin/accounts', seed);
  }

  /** `GET /v1/accounts/:tenant/:account` (wallet, a scoped read: see `request`): the balance, or undefined. */
  async balance(tenant: string, account: string): Promise<{ minor: number; currency: string } | undefined> {
    const path = `/v1/accounts/${encodeURIComponent(tenant)}/${encodeURIComponent(account)}`;
    const body = await this.request<{ balance: { minor: number; currency: string } } | undefined>(
      'GET',
      path,
      undefined,
      [404],
    );
    return body?.balance;
  }

  /**
   * Any admin or read route of a service (`POST /admin/stock`, `GET /v1/stock/...`): the parsed JSON body. A path
   * under `/admin/` goes to the admin listener with its token. A record read (`GET /v1/<records>/<tenant>/...`) is
   * scoped (services/read-capability.ts): with the client's signer, to the public listener with a read capability
   * for that path and tenant; without one, to the admin listener (`/admin/v1/...`) when the client has it.
   * Resolves undefined for a status in `absentOn` (e.g. 404); throws `DownstreamAdminError` on other failures.
   */
  request<T>(method: string, path: string, body?: unknown, absentOn: readonly number[] = []): Promise<T> {
    if (path.startsWith('/admin/')) return this.admin<T>(method, path, body, absentOn);
    if (method.toUpperCase() === 'GET' && path.startsWith('/v1/') && !path.startsWith('/v1/operations/')) {
      const read = this.readCapability(path);
      if (read !== undefined) return this.call<T>(method, path, body, absentOn, undefined, read);
      if (this.adminTarget !== undefined) return this.admin<T>(method, `/admin${path}`, body, absentOn);
    }
    return this.call<T>(method, path, body, absentOn);
  }

  /** A read capability from the client's signer for the record at `path` (`/v1/<records>/<tenant>/...`). */
  private readCapability(path: string): string | undefined {
    const bare = path.split('?')[0] ?? path;
    const segments = bare.split('/').map((s) => decodeURIComponent(s));
    const tenant = segments[3];
    if (this.signer === undefined || tenant === undefined) return undefined;
    return this.signer({
      kind: 'read',
      path: segments.join('/'),
      key: segments.join('/'),
      argumentsHash: READ_ARGUMENTS_HASH,
      tenant,
    });
  }

  private admin<T>(method: string, path: string, body?: unknown, absentOn: readonly number[] = []): Promise<T> {
    if (this.adminTarget === undefined) {
      return Promise.reject(
        new DownstreamAdminError(`${method} ${path}: no admin listener configured for ${this.baseUrl}`),
      );
    }
    return this.call<T>(method, path, body, absentOn, this.adminTarget);
  }

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    absentOn: readonly number[] = [],
    admin?: { readonly baseUrl: string; readonly token: string },
    capability?: string,
  ): Promise<T> {
    let response: Response;
    let text: string;
    const headers: Record<string, string> = {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(admin === undefined ? {} : { authorization: `Bearer ${admin.token}` }),
      ...(capability === undefined ? {} : { [CAPABILITY_HEADER]: capability }),
    };
    try {
      response = await fetch((admin?.baseUrl ?? this.baseUrl) + path, {
        method,
        headers,
        signal: this.signal(undefined),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      text = await response.text();
    } catch (err) {
      throw new DownstreamAdminError(`${method} ${path} failed: ${classifyTransportError(err).reason}`);
    }
    if (absentOn.includes(response.status)) return undefined as T;
    if (!response.ok) throw new DownstreamAdminError(`${method} ${path} answered ${response.status}: ${text}`);
    return parseJson(text) as T;
  }

  private signal(caller: AbortSignal | undefined): AbortSignal {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    return caller === undefined ? timeout : AbortSignal.any([timeout, caller]);
  }
}

/** Whether `signal` is aborted (a function, so narrowing from before an `await` does not stick). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Parses JSON text; undefined for an empty or non-JSON body. */
function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
