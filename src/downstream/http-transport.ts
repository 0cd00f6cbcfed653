/**
 * The transport of a third-party HTTP API (Stripe-style), read from its declaration (src/domain/transport.ts):
 * one request under the key header, classified by the statuses the declaration names, and a lookup by key or by
 * a metadata field. It never retries and never decides what follows; anything the declaration does not name reads
 * as UNKNOWN (a 5xx, a timeout after sending, an undeclared 4xx, an unreadable 2xx): do not guess.
 *
 * The credential is a worker secret sent in a header; it is never in the URL, the history or a reason.
 */
import type { Json } from '../domain/canonical';
import { Failure } from '../domain/failures';
import type { LookupAnswer } from '../domain/recovery';
import type { HttpTransport as HttpDeclaration } from '../domain/transport';
import { classifyTransportError, type SendOutcome } from './classify';
import { parseJson } from './client';
import { fieldAt, fieldIs, fillTemplate, formEncode, matchesAny, TemplateError } from './http-reading';
import { redact } from './secrets';
import { declaredRetention, type AttemptCall, type LookupCall, type Retention, type Transport } from './transport';

/** Default per-request timeout; a timeout after sending is `response_lost`. */
export const HTTP_API_TIMEOUT_MS = 10_000;

const DEFAULT_IN_FLIGHT = [{ status: 409 }] as const;
const DEFAULT_NOT_PROCESSED = [{ status: 429 }] as const;

export interface HttpApiOptions {
  /** The API's base URL: the worker's `services[<tool service>]`. */
  readonly baseUrl: string;
  /** The secrets the declaration names (its `auth.secret`), checked present at the worker's start. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

export class HttpApiTransport implements Transport {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly decl: HttpDeclaration,
    private readonly options: HttpApiOptions,
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? HTTP_API_TIMEOUT_MS;
  }

  /** The key as the API sees it: the vendor prefix, then the key the call sends. */
  keyOf(key: string): string {
    return `${this.decl.key?.prefix ?? ''}${key}`;
  }

  async send(call: AttemptCall): Promise<SendOutcome> {
    if (call.signal.aborted || Date.now() >= call.deadlineAtMs)
      return { kind: 'unavailable', reason: 'not sent: the attempt was cancelled or reached its deadline' };
    const key = this.keyOf(call.key);
    let url: string;
    let body: string;
    try {
      url = this.baseUrl + fillTemplate(this.decl.path, fieldsOf(call.body));
      const payload = this.decl.body ? this.decl.body(call.body, key) : withoutTenant(call.body);
      body = this.decl.encoding === 'form' ? formEncode(payload) : JSON.stringify(payload);
    } catch (err) {
      const why = err instanceof TemplateError ? err.message : `the request could not be built: ${String(err)}`;
      return { kind: 'unavailable', reason: `not sent: ${this.redact(why)}` };
    }
    const headers = {
      'content-type': this.decl.encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
      [this.decl.key?.header ?? 'Idempotency-Key']: key,
      ...this.authHeader(),
    };
    const signal = AbortSignal.any([call.signal, AbortSignal.timeout(this.timeoutFor(call.deadlineAtMs))]);
    let response: Response;
    try {
      response = await fetch(url, { method: this.decl.method, headers, body, redirect: 'manual', signal });
    } catch (err) {
      if (call.signal.aborted) return { kind: 'response_lost', reason: 'cancelled by the caller in flight' };
      const failed = classifyTransportError(err);
      return { ...failed, reason: this.redact(failed.reason) };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      return { kind: 'response_lost', reason: `${response.status} body lost: ${classifyTransportError(err).reason}` };
    }
    return this.classify(response.status, parseJson(text), response.headers.get('idempotent-replayed') === 'true');
  }

  /** A response, by the statuses the declaration names; anything else that is not a readable 2xx is UNKNOWN. */
  classify(status: number, body: unknown, replayed: boolean): SendOutcome {
    const statuses = this.decl.statuses ?? {};
    if (status >= 200 && status < 300) {
      if (body === undefined) return { kind: 'response_lost', reason: `${status} with an unreadable body` };
      const receipt = fieldAt(body, this.decl.receiptField ?? 'id');
      return { kind: 'ok', status, body, replayed, ...(typeof receipt === 'string' ? { receipt } : {}) };
    }
    if (matchesAny(status, body, statuses.inFlight ?? DEFAULT_IN_FLIGHT)) return { kind: 'in_progress' };
    if (matchesAny(status, body, statuses.keyReused))
      return { kind: 'rejected', status, code: Failure.IdempotencyArgumentsMismatch, body: null };
    if (matchesAny(status, body, statuses.notProcessed ?? DEFAULT_NOT_PROCESSED))
      return { kind: 'unavailable', reason: `${status}: the API did not process the request` };
    if (matchesAny(status, body, statuses.refused)) {
      const raw = this.decl.errorCodeField ? fieldAt(body, this.decl.errorCodeField) : undefined;
      const mapped = typeof raw === 'string' ? this.decl.codes?.[raw] : undefined;
      return {
        kind: 'rejected',
        status,
        code: 'Downstream.Rejected',
        reason: mapped ?? Failure.DispatchRejected,
        body,
      };
    }
    return { kind: 'response_lost', reason: `${status}: not a status the declaration reads as done or not done` };
  }

  async lookup(call: LookupCall): Promise<LookupAnswer> {
    const l = this.decl.lookup;
    if (l === undefined) return { kind: 'unreachable', reason: 'the API declares no lookup' };
    let url: string;
    try {
      const vars = { ...fieldsOf(call.body ?? {}), key: this.keyOf(call.key) };
      const query = Object.entries(l.query ?? {}).map(
        ([name, t]) => `${encodeURIComponent(name)}=${encodeURIComponent(fillTemplate(t, vars, (v) => v))}`,
      );
      url = `${this.baseUrl}${fillTemplate(l.path, vars)}${query.length ? `?${query.join('&')}` : ''}`;
    } catch (err) {
      return { kind: 'unreachable', reason: this.redact(String((err as Error).message ?? err)) };
    }
    let status: number;
    let body: unknown;
    try {
      const signal = AbortSignal.any([...(call.signal ? [call.signal] : []), AbortSignal.timeout(this.timeoutMs)]);
      const response = await fetch(url, { headers: this.authHeader(), redirect: 'manual', signal });
      status = response.status;
      body = parseJson(await response.text());
    } catch (err) {
      return { kind: 'unreachable', reason: this.redact(classifyTransportError(err).reason) };
    }
    return this.readLookup(status, body);
  }

  /** A lookup's answer: found (completed, failed or pending, as declared), not found, or unreadable. */
  readLookup(status: number, body: unknown): LookupAnswer {
    const l = this.decl.lookup!;
    let record: unknown;
    if (l.results !== undefined) {
      const list = status === 200 ? fieldAt(body, l.results) : undefined;
      if (!Array.isArray(list)) return { kind: 'unreachable', reason: `lookup answered ${status} without a list` };
      if (list.length === 0) return { kind: 'not_found', sealed: false };
      record = list[0];
    } else if (status === 404) {
      return { kind: 'not_found', sealed: false };
    } else if (status === 200 && body !== undefined) {
      record = body;
    } else {
      return { kind: 'unreachable', reason: `lookup answered ${status}` };
    }
    const receipt = fieldAt(record, this.decl.receiptField ?? 'id');
    const statusOf = (): 'completed' | 'failed' | 'in_progress' => {
      if (l.pendingWhen && fieldIs(record, l.pendingWhen)) return 'in_progress';
      if (l.failedWhen && fieldIs(record, l.failedWhen)) return 'failed';
      return 'completed';
    };
    return {
      kind: 'found',
      status: statusOf(),
      result: record,
      ...(typeof receipt === 'string' ? { receipt } : {}),
    };
  }

  async retention(): Promise<Retention> {
    return declaredRetention(this.decl.keyRetentionMs);
  }

  private authHeader(): Record<string, string> {
    const auth = this.decl.auth;
    if (auth === undefined) return {};
    const value = this.options.secrets[auth.secret] ?? '';
    const scheme = auth.scheme ?? 'Bearer';
    return { [auth.header ?? 'authorization']: scheme === '' ? value : `${scheme} ${value}` };
  }

  private timeoutFor(deadlineAtMs: number): number {
    return Math.max(1, Math.min(this.timeoutMs, deadlineAtMs - Date.now()));
  }

  private redact(text: string): string {
    return redact(text, this.options.secrets);
  }
}

function fieldsOf(body: Json): Readonly<Record<string, unknown>> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
}

function withoutTenant(body: Json): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { tenant: _tenant, ...rest } = body;
  return rest;
}
