/**
 * Pure classification of a downstream call's outcome, the basis of every retry and reconciliation decision:
 *
 *   - `ok`            the service answered 2xx (possibly a replay of the retained result);
 *   - `rejected`      a 4xx business or contract refusal: certainly no new effect from this request;
 *   - `in_progress`   409 `Idempotency.InProgress`: another request under the key is still running;
 *   - `unavailable`   certainly not applied (never connected, or 5xx with `committed: false`);
 *   - `response_lost` ambiguous: the request may have been received and applied (reset after connect, timeout
 *                     or abort after sending, 502/504, unreadable response). Reconcile by key before anything else.
 *
 * Anything unknown is classified as `response_lost`: only evidence of "not applied" may produce `unavailable`.
 */
import { DownstreamErrorCode } from './protocol';

/** The outcome of `DownstreamClient.send`; never an exception for HTTP or network outcomes. */
export type SendOutcome =
  | {
      readonly kind: 'ok';
      readonly status: number;
      readonly body: unknown;
      readonly replayed: boolean;
      /** The effect's receipt, when the transport knows where it is (else the body's `receipt`). */
      readonly receipt?: string;
    }
  | {
      readonly kind: 'rejected';
      readonly status: number;
      /** The body's `error` code, e.g. `Idempotency.ArgumentsMismatch`, `Downstream.Rejected`. */
      readonly code: string;
      /** The body's `reason` for business rejections, e.g. `Wallet.InsufficientFunds`. */
      readonly reason?: string;
      readonly body: unknown;
    }
  | { readonly kind: 'in_progress' }
  | { readonly kind: 'unavailable'; readonly reason: string }
  | { readonly kind: 'response_lost'; readonly reason: string };

/** How a transport failure (no HTTP response) is classified. */
export type TransportFailure = Extract<SendOutcome, { kind: 'unavailable' | 'response_lost' }>;

/** Error codes/names proving the request never reached the service. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Error codes/names after which the request may have been received. */
const MAYBE_SENT = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_ABORTED',
  'AbortError',
  'TimeoutError',
]);

/**
 * Classifies an error thrown by `fetch` (undici): walks `err` and its `cause` chain for a `code` or `name`.
 * Connection refused / DNS failures are `unavailable`; resets, closed sockets, timeouts, aborts and anything
 * unrecognized are `response_lost`.
 */
export function classifyTransportError(err: unknown): TransportFailure {
  const chain: { code?: unknown; name?: unknown; message?: unknown }[] = [];
  for (let e: unknown = err; e !== null && typeof e === 'object' && chain.length < 8;) {
    const item = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    chain.push(item);
    e = item.cause;
  }
  const reason = describe(chain, err);
  for (const item of chain) {
    if (typeof item.code === 'string' && NOT_SENT.has(item.code)) return { kind: 'unavailable', reason };
  }
  const known = chain.some(
    (item) =>
      (typeof item.code === 'string' && MAYBE_SENT.has(item.code)) ||
      (typeof item.name === 'string' && MAYBE_SENT.has(item.name)) ||
      (typeof item.message === 'string' && /other side closed|socket hang up/i.test(item.message)),
  );
  return { kind: 'response_lost', reason: known ? reason : `unrecognized transport error (${reason})` };
}

/**
 * Classifies an HTTP response. `body` is the parsed JSON body (or undefined when it was not JSON); `replayed`
 * is whether the `Idempotent-Replayed: true` header was present.
 */
export function classifyHttpResponse(status: number, body: unknown, replayed: boolean): SendOutcome {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as {
    error?: unknown;
    reason?: unknown;
    message?: unknown;
    committed?: unknown;
  };
  const code = typeof fields.error === 'string' ? fields.error : `HTTP ${status}`;
  const summary = `${status} ${code}${typeof fields.message === 'string' ? `: ${fields.message}` : ''}`;
  if (status >= 200 && status < 300) {
    if (body === undefined) return { kind: 'response_lost', reason: `${status} with an unreadable body` };
    return { kind: 'ok', status, body, replayed };
  }
  if (status === 409 && code === DownstreamErrorCode.InProgress) return { kind: 'in_progress' };
  // 408 and 429 mean the service refused to process the request at all.
  if (status === 408 || status === 429) return { kind: 'unavailable', reason: summary };
  if (status >= 400 && status < 500) {
    return {
      kind: 'rejected',
      status,
      code,
      ...(typeof fields.reason === 'string' ? { reason: fields.reason } : {}),
      body,
    };
  }
  if (status >= 500 && status < 600 && fields.committed === false && status !== 502 && status !== 504) {
    return { kind: 'unavailable', reason: summary };
  }
  return { kind: 'response_lost', reason: summary };
}

function describe(chain: readonly { code?: unknown; name?: unknown; message?: unknown }[], err: unknown): string {
  const parts = chain.map((e) =>
    [e.code, e.name, e.message].filter((x): x is string => typeof x === 'string' && x !== '').join(' '),
  );
  const text = parts.filter((p) => p !== '').join(' <- ');
  return text === '' ? String(err) : text;
}
