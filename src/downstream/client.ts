/**
 * Typed HTTP client of a Ledgerloop downstream service (global `fetch`, i.e. undici on Node 20).
 *
 * `send` and `lookup` never throw for HTTP or network outcomes: they return discriminated unions (see
 * `classify.ts`). The client never retries: Temporal is the only retry owner. It speaks only the HTTP contract
 * (src/downstream/protocol.ts): a mutation, a lookup or seal, and the declared contract. A service's admin listener
 * and record reads are plumbing of the tests, the demo and the lab (services/admin-client.ts).
 */
import { CAPABILITY_HEADER } from '../capability/capability';
import { hashCanonical } from '../domain/canonical';
import { shallowOrMarker } from '../domain/json-depth';
import { classifyHttpResponse, classifyTransportError, type SendOutcome } from './classify';
import {
  HEADER_ARGS_HASH,
  HEADER_FENCE,
  HEADER_INTENT_AT,
  HEADER_KEY,
  HEADER_REPLAYED,
  type OperationRecord,
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
}

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

/**
 * What the dispatch activity needs of a downstream service: one send, one lookup (or seal), and the declared
 * contract. `DownstreamClient` is the production one; a worker can be given a wrapper of it
 * (`LedgerloopWorkerOptions.downstreamClient`), e.g. for tracing or a test double.
 */
export interface Downstream {
  send(path: string, body: unknown, options: SendOptions): Promise<SendOutcome>;
  lookup(key: string, options: LookupOptions): Promise<LookupOutcome>;
  contract(): Promise<ServiceContract>;
}

/** `contract()` could not read the service's declared contract (transport error or a non-2xx status). */
export class DownstreamContractError extends Error {
  override readonly name = 'Downstream.ContractUnreadable';
}

/** Client of one downstream service: the HTTP contract and nothing else. */
export class DownstreamClient implements Downstream {
  readonly baseUrl: string;
  readonly timeoutMs: number;

  constructor(options: DownstreamClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
    const capability = options.capability;
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
   * key, tenant and lookup/seal.
   */
  async lookup(key: string, options: LookupOptions): Promise<LookupOutcome> {
    const seal = options.seal === true;
    const path = `/v1/operations/${encodeURIComponent(key)}`;
    const capability = options.capability;
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
    // Quoted after the depth check: `JSON.stringify` recurses.
    const quoted = JSON.stringify(shallowOrMarker(body ?? null)).slice(0, 200);
    return { kind: 'unreachable', reason: `lookup answered ${status}: ${quoted}` };
  }

  /** `GET /v1/contract`: the declared idempotency retention. Throws `DownstreamContractError` when unreadable. */
  async contract(): Promise<ServiceContract> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.baseUrl}/v1/contract`, { signal: this.signal(undefined), redirect: 'manual' });
      text = await response.text();
    } catch (err) {
      throw new DownstreamContractError(`GET /v1/contract failed: ${classifyTransportError(err).reason}`);
    }
    if (!response.ok) throw new DownstreamContractError(`GET /v1/contract answered ${response.status}: ${text}`);
    return parseJson(text) as ServiceContract;
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
export function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
