/**
 * An SDK-shaped client of the vendor payments API (services/vendor-payments), as a provider's Node library reads:
 * resources with `create` and `search`, per-request options (`idempotencyKey`, `signal`), typed errors with the
 * API's `type` and `code`, and its own retries off (`maxNetworkRetries: 0`: Temporal is the one retry owner).
 */
export class PaymentsError extends Error {
  override readonly name = 'PaymentsError';
  constructor(
    readonly statusCode: number,
    readonly type: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The request never got an answer (reset, timeout): it may have been executed. */
export class PaymentsConnectionError extends Error {
  override readonly name = 'PaymentsConnectionError';
}

interface RequestOptions {
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

type Params = Readonly<Record<string, string | number | Readonly<Record<string, string>>>>;

export class PaymentsClient {
  constructor(
    private readonly apiKey: string,
    private readonly opts: { readonly baseUrl: string; readonly maxNetworkRetries: 0 },
  ) {}

  readonly charges = {
    create: (p: Params, o?: RequestOptions) =>
      this.post<{ id: string; status: string; amount: number; currency: string }>('/v1/charges', p, o),
    search: (q: { query: string }, o?: RequestOptions) =>
      this.get<{ data: Array<{ id: string; amount: number; amount_refunded: number }> }>(
        `/v1/charges/search?query=${encodeURIComponent(q.query)}`,
        o,
      ),
  };

  readonly refunds = {
    create: (p: Params, o?: RequestOptions) =>
      this.post<{ id: string; status: string; charge: string; amount: number }>('/v1/refunds', p, o),
    search: (q: { query: string }, o?: RequestOptions) =>
      this.get<{ data: Array<{ id: string; status: string }> }>(
        `/v1/refunds/search?query=${encodeURIComponent(q.query)}`,
        o,
      ),
  };

  private async get<T>(path: string, o?: RequestOptions): Promise<T> {
    return this.request<T>('GET', path, undefined, o);
  }

  private async post<T>(path: string, p: Params, o?: RequestOptions): Promise<T> {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(p)) {
      if (typeof v === 'object') for (const [mk, mv] of Object.entries(v)) form.set(`${k}[${mk}]`, mv);
      else form.set(k, String(v));
    }
    return this.request<T>('POST', path, form.toString(), o);
  }

  private async request<T>(method: string, path: string, body: string | undefined, o?: RequestOptions): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.apiKey}`,
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          ...(o?.idempotencyKey ? { 'Idempotency-Key': o.idempotencyKey } : {}),
        },
        ...(body !== undefined ? { body } : {}),
        ...(o?.signal ? { signal: o.signal } : {}),
      });
    } catch (err) {
      throw new PaymentsConnectionError(`the request got no answer: ${(err as Error).message}`);
    }
    const text = await res.text().catch(() => {
      throw new PaymentsConnectionError(`${res.status} without a readable body`);
    });
    const parsed = text ? (JSON.parse(text) as { error?: { type: string; code: string; message: string } }) : {};
    if (!res.ok) {
      const e = parsed.error ?? { type: 'api_error', code: 'unknown', message: `HTTP ${res.status}` };
      throw new PaymentsError(res.status, e.type, e.code, e.message);
    }
    return parsed as T;
  }
}
