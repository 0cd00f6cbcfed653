/**
 * The one classifier for model-provider errors. The OpenAI client runs with `maxRetries: 0`, so every error it
 * throws reaches this function, and the verdict decides whether Temporal (the only retry owner) tries again and
 * after how long:
 *
 *   429, 408, 409, 5xx, connection errors, connection timeouts -> retryable, after `retry-after-ms` /
 *                                                                 `retry-after` when the provider sent one
 *   400, 401, 403, 404, 422 (and any other 4xx)                -> not retryable
 *
 * Messages are built from the status and the provider's own error text, with anything that looks like a
 * credential redacted. Request headers are never read, so the API key cannot leak from them.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

export type RetryableReason =
  | 'rate_limited'
  | 'request_timeout'
  | 'conflict'
  | 'server_error'
  | 'connection'
  | 'connection_timeout'
  | 'aborted'
  | 'unclassified';

export type RejectedReason =
  'bad_request' | 'unauthorized' | 'forbidden' | 'not_found' | 'unprocessable' | 'client_error';

/** What the planner activity does with a provider error. */
export type ProviderVerdict =
  | {
      readonly retryable: true;
      readonly reason: RetryableReason;
      readonly status?: number;
      /** The provider's requested wait before the next attempt, when it sent one. */
      readonly nextRetryDelayMs?: number;
      readonly message: string;
    }
  | { readonly retryable: false; readonly reason: RejectedReason; readonly status: number; readonly message: string };

export interface ClassifyOptions {
  /** Exact strings to redact from messages (e.g. the client's API key). */
  readonly secrets?: readonly string[];
  /** Clock for `retry-after` given as an HTTP date. */
  readonly nowMs?: number;
}

const MAX_MESSAGE_CHARS = 400;

const REJECTED: Readonly<Record<number, RejectedReason>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  422: 'unprocessable',
};

type HeaderSource = Headers | Readonly<Record<string, string | string[] | undefined>> | undefined | null;

function header(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The wait a response asks for, in ms: `retry-after-ms` first, then `retry-after` as seconds or an HTTP date.
 * Undefined when absent, unparseable or negative.
 */
export function retryAfterMs(headers: HeaderSource, nowMs: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return Math.round(n);
  }
  const after = header(headers, 'retry-after')?.trim();
  if (after === undefined || after === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.round(Number(after) * 1000);
  const at = Date.parse(after);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Removes credentials from provider text: the given secrets, `sk-...` keys, bearer tokens. Caps the length. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  out = out.replace(/\bsk-[A-Za-z0-9*_-]{3,}/g, 'sk-[redacted]').replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]');
  return out.length > MAX_MESSAGE_CHARS ? `${out.slice(0, MAX_MESSAGE_CHARS)}...` : out;
}

function statusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === 'number' && Number.isInteger(s) ? s : undefined;
}

function retryableFor(status: number): RetryableReason | undefined {
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'request_timeout';
  if (status === 409) return 'conflict';
  if (status >= 500) return 'server_error';
  return undefined;
}

/** Classify anything the OpenAI client (or the code around it) threw. Never throws. */
export function classifyProviderError(err: unknown, opts: ClassifyOptions = {}): ProviderVerdict {
  const secrets = opts.secrets ?? [];
  const text = (prefix: string): string => {
    const raw = err instanceof Error ? err.message : String(err);
    return redact(`${prefix}: ${raw}`, secrets);
  };
  // Order matters: the timeout and abort classes are subclasses of APIConnectionError / APIError.
  if (err instanceof APIConnectionTimeoutError) {
    return { retryable: true, reason: 'connection_timeout', message: text('model provider request timed out') };
  }
  if (err instanceof APIUserAbortError) {
    return { retryable: true, reason: 'aborted', message: text('model provider request aborted') };
  }
  if (err instanceof APIConnectionError) {
    return { retryable: true, reason: 'connection', message: text('model provider unreachable') };
  }
  const status = err instanceof APIError ? err.status : statusOf(err);
  if (status === undefined) {
    return { retryable: true, reason: 'unclassified', message: text('model provider call failed') };
  }
  const retryable = retryableFor(status);
  if (retryable !== undefined) {
    const headers = (err as { headers?: HeaderSource }).headers;
    const delay = retryAfterMs(headers, opts.nowMs ?? Date.now());
    return {
      retryable: true,
      reason: retryable,
      status,
      ...(delay !== undefined ? { nextRetryDelayMs: delay } : {}),
      message: text(`model provider HTTP ${status} (${retryable}, retryable)`),
    };
  }
  const reason = REJECTED[status] ?? 'client_error';
  return {
    retryable: false,
    reason,
    status,
    message: text(`model provider HTTP ${status} (${reason}, not retryable)`),
  };
}
