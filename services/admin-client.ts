/**
 * A client of a simulated service for plumbing (the tests, the demo, the fault lab, the bench, the security
 * attacks): the production `DownstreamClient` (the HTTP contract only) plus the service's admin listener
 * (`stats`, `refusals`, `armFault`, `clearFaults`, `seedAccount`, `request` on `/admin/...`), its scoped record
 * reads (`balance`, `request` on `/v1/<records>/...`) and an optional signer for requests given no capability.
 * Workers never use it: they send only what the dispatch activity signed. Admin calls throw `DownstreamAdminError`.
 */
import { CAPABILITY_HEADER } from '../src/capability/capability';
import { hashCanonical } from '../src/domain/canonical';
import {
  classifyTransportError,
  DownstreamClient,
  type DownstreamClientOptions,
  parseJson,
  type LookupOptions,
  type LookupOutcome,
  type SendOptions,
  type SendOutcome,
} from '../src/downstream/client';
import {
  LOOKUP_ARGUMENTS_HASH,
  READ_ARGUMENTS_HASH,
  type ArmedFaultState,
  type FaultRule,
  type KeyStats,
  type RefusalCounts,
} from '../src/downstream/protocol';

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

/** Options of `AdminClient`: the production client's, plus the admin listener and a signer. */
export interface AdminClientOptions extends DownstreamClientOptions {
  /**
   * The service's admin listener (`spawnService` returns `adminUrl` and `adminToken`). Default none: the admin
   * helpers throw `DownstreamAdminError`.
   */
  readonly admin?: { readonly baseUrl: string; readonly token: string };
  /**
   * Signs a capability for a request that was given none (plumbing that holds the key: `devCapabilitySigner`).
   * Default none: a request without a capability is sent without one (and refused by a verifying service).
   */
  readonly signer?: CapabilitySigner;
}

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

type AdminTarget = { readonly baseUrl: string; readonly token: string };

/** A `DownstreamClient` with a service's admin listener, its record reads and a plumbing signer. */
export class AdminClient extends DownstreamClient {
  private readonly adminTarget: AdminTarget | undefined;
  private readonly signer: CapabilitySigner | undefined;

  constructor(options: AdminClientOptions) {
    super(options);
    this.adminTarget =
      options.admin === undefined
        ? undefined
        : { baseUrl: options.admin.baseUrl.replace(/\/+$/, ''), token: options.admin.token };
    this.signer = options.signer;
  }

  /** `send`, with a capability from the signer when the call was given none. */
  override send(path: string, body: unknown, options: SendOptions): Promise<SendOutcome> {
    if (options.capability !== undefined || this.signer === undefined) return super.send(path, body, options);
    let argumentsHash: string;
    try {
      argumentsHash = options.argumentsHash ?? hashCanonical(body);
    } catch {
      return super.send(path, body, options); // not serializable: the production client says so, typed
    }
    const tenant = (body as { tenant?: unknown } | null)?.tenant;
    const capability = this.signer({
      kind: 'mutation',
      path,
      key: options.key,
      argumentsHash,
      tenant: typeof tenant === 'string' ? tenant : '',
    });
    return super.send(path, body, capability === undefined ? options : { ...options, capability });
  }

  /** `lookup`, with a capability from the signer when the call was given none. */
  override lookup(key: string, options: LookupOptions): Promise<LookupOutcome> {
    if (options.capability !== undefined || this.signer === undefined) return super.lookup(key, options);
    const capability = this.signer({
      kind: options.seal === true ? 'seal' : 'lookup',
      path: `/v1/operations/${encodeURIComponent(key)}`,
      key,
      argumentsHash: LOOKUP_ARGUMENTS_HASH,
      tenant: options.tenant,
    });
    return super.lookup(key, capability === undefined ? options : { ...options, capability });
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
    admin?: AdminTarget,
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
        signal: AbortSignal.timeout(this.timeoutMs),
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
}
