// @ts-check
// A payment provider's Node library, in the shape such libraries have: resources with `create` and `search`,
// per-request options (`idempotencyKey`, `signal`), typed errors carrying the API's `type` and `code`, and its own
// network retries off (Temporal is the one retry owner). Swap in your provider's real SDK; keep those settings.

/** The API answered with an error: `type` and `code` are the provider's (e.g. `invalid_request_error`). */
class PaymentsError extends Error {
  /**
   * @param {number} statusCode
   * @param {string} type
   * @param {string} code
   * @param {string} message
   */
  constructor(statusCode, type, code, message) {
    super(message);
    this.name = 'PaymentsError';
    this.statusCode = statusCode;
    this.type = type;
    this.code = code;
  }
}

/** @typedef {{ idempotencyKey?: string, signal?: AbortSignal }} RequestOptions */
/** @typedef {{ id: string, status: string, amount: number, charge?: string, metadata?: Record<string, string> }} PaymentObject */

class PaymentsClient {
  /**
   * @param {string} apiKey
   * @param {{ baseUrl: string, maxNetworkRetries: 0 }} opts
   */
  constructor(apiKey, opts) {
    this.apiKey = apiKey;
    this.baseUrl = opts.baseUrl;
    this.charges = {
      /** @param {{ query: string }} q @param {RequestOptions} [o] */
      search: (q, o) => this.request('GET', `/v1/charges/search?query=${encodeURIComponent(q.query)}`, undefined, o),
    };
    this.refunds = {
      /** @param {Record<string, string | number | Record<string, string>>} p @param {RequestOptions} [o] */
      create: (p, o) => this.request('POST', '/v1/refunds', p, o),
      /** @param {{ query: string }} q @param {RequestOptions} [o] */
      search: (q, o) => this.request('GET', `/v1/refunds/search?query=${encodeURIComponent(q.query)}`, undefined, o),
    };
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {Record<string, string | number | Record<string, string>> | undefined} params
   * @param {RequestOptions} [o]
   * @returns {Promise<any>}
   */
  async request(method, path, params, o = {}) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(params ?? {}))
      if (typeof v === 'object') for (const [mk, mv] of Object.entries(v)) form.set(`${k}[${mk}]`, mv);
      else form.set(k, String(v));
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${this.apiKey}` };
    if (params) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (o.idempotencyKey) headers['Idempotency-Key'] = o.idempotencyKey;
    // A request that got no answer (reset, timeout, abort) throws what fetch threw: it may have been executed.
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(params ? { body: form.toString() } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const text = await res.text();
    const body = text ? JSON.parse(text) : {};
    if (!res.ok) {
      const e = body.error ?? { type: 'api_error', code: 'unknown', message: `HTTP ${res.status}` };
      throw new PaymentsError(res.status, e.type, e.code, e.message);
    }
    return body;
  }
}

module.exports = { PaymentsClient, PaymentsError };
