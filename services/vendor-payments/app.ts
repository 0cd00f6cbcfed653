/**
 * The vendor payments API (Hono): charges and refunds under the idempotency layer (idempotency.ts), retrieval, and a
 * search by metadata that lags writes, as a provider's does. Bodies are form-encoded (`metadata[k]=v`) or JSON;
 * every request needs `Authorization: Bearer <api key>`. Amounts are integers in minor units; times are ms.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { VendorFaults } from './faults';
import { idempotent, Refusal, stripeError, type Answer } from './idempotency';
import type { ChargeRow, RefundRow, VendorStore } from './store';

export interface VendorOptions {
  readonly store: VendorStore;
  readonly faults: VendorFaults;
  readonly apiKey: string;
  /** How long a key is kept; default 24 h. */
  readonly retentionMs: number;
  /** How long a new object stays out of search results. */
  readonly searchLagMs: number;
}

type Env = { Bindings: HttpBindings };

/** A form body as a nested object: `metadata[k]=v` → `{ metadata: { k: 'v' } }`. */
export function parseForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const parts = name.split(/[[\]]+/).filter((p) => p !== '');
    let node = out;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}

async function params(c: Context<Env>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if ((c.req.header('content-type') ?? '').includes('application/json')) {
    const parsed = JSON.parse(text === '' ? '{}' : text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  }
  return parseForm(text);
}

const invalid = (code: string, message: string) =>
  new Refusal(stripeError(400, 'invalid_request_error', code, message));

function amountOf(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw invalid('parameter_invalid_integer', 'amount must be a positive integer');
  return n;
}

function metadataOf(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) throw invalid('parameter_invalid', 'metadata must be a hash');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function authorized(header: string | undefined, apiKey: string): boolean {
  const given = header?.startsWith('Bearer ') ? header.slice(7) : '';
  const a = createHash('sha256').update(given).digest();
  return given !== '' && timingSafeEqual(a, createHash('sha256').update(apiKey).digest());
}

/** `metadata["k"]:"v"` (Stripe's search syntax, the one clause this server reads). */
function metadataQuery(query: string | undefined): { field: string; value: string } | undefined {
  const m = /^metadata\[["']([^"']+)["']\]:["']([^"']*)["']$/.exec(query ?? '');
  return m ? { field: m[1]!, value: m[2]! } : undefined;
}

export function vendorApp(o: VendorOptions): Hono<Env> {
  const app = new Hono<Env>();
  app.use('/v1/*', async (c, next) => {
    if (!authorized(c.req.header('authorization'), o.apiKey)) {
      const e = stripeError(401, 'invalid_request_error', 'api_key_invalid', 'Invalid API Key provided.');
      return c.json(e.body as object, 401);
    }
    await next();
  });
  app.post('/v1/charges', async (c) => {
    const p = await params(c);
    let charge: Omit<ChargeRow, 'id' | 'created' | 'status'> | undefined;
    return idempotent(c, o.store, o.faults, o.retentionMs, {
      path: '/v1/charges',
      params: p,
      check() {
        const customer = typeof p['customer'] === 'string' ? p['customer'] : '';
        if (!/^cus_[A-Za-z0-9]{1,32}$/.test(customer)) throw invalid('parameter_missing', 'customer is required');
        const currency = typeof p['currency'] === 'string' ? p['currency'] : '';
        if (!/^[a-z]{3}$/.test(currency)) throw invalid('parameter_invalid', 'currency is a lowercase ISO code');
        charge = {
          object: 'charge',
          customer,
          amount: amountOf(p['amount']),
          currency,
          amount_refunded: 0,
          metadata: metadataOf(p['metadata']),
        };
      },
      execute(): Answer {
        const declined = charge!.customer.startsWith('cus_declined');
        const row: ChargeRow = {
          ...charge!,
          id: o.store.nextId('ch'),
          status: declined ? 'failed' : 'succeeded',
          created: o.store.now(),
        };
        o.store.insertCharge(row);
        if (declined)
          return {
            status: 402,
            body: {
              error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.', charge: row.id },
            },
          };
        return { status: 200, body: row };
      },
    });
  });
  app.post('/v1/refunds', async (c) => {
    const p = await params(c);
    let refund: Omit<RefundRow, 'id' | 'created'> | undefined;
    return idempotent(c, o.store, o.faults, o.retentionMs, {
      path: '/v1/refunds',
      params: p,
      check() {
        const charge = o.store.charge(typeof p['charge'] === 'string' ? p['charge'] : '');
        if (charge === undefined || charge.status !== 'succeeded')
          throw new Refusal(stripeError(404, 'invalid_request_error', 'resource_missing', 'No such charge.'));
        const amount = p['amount'] === undefined ? charge.amount - charge.amount_refunded : amountOf(p['amount']);
        if (amount > charge.amount - charge.amount_refunded)
          throw invalid('amount_too_large', 'the refund exceeds what is left of the charge');
        refund = {
          object: 'refund',
          charge: charge.id,
          amount,
          status: 'succeeded',
          metadata: metadataOf(p['metadata']),
        };
      },
      execute(): Answer {
        const row: RefundRow = { ...refund!, id: o.store.nextId('re'), created: o.store.now() };
        o.store.insertRefund(row);
        return { status: 200, body: row };
      },
    });
  });
  for (const kind of ['charges', 'refunds'] as const) {
    app.get(`/v1/${kind}/search`, (c) => {
      const q = metadataQuery(c.req.query('query'));
      if (q === undefined) {
        const e = stripeError(
          400,
          'invalid_request_error',
          'parameter_invalid',
          'query must be metadata["key"]:"value"',
        );
        return c.json(e.body as object, 400);
      }
      const data = o.store.search(kind, q.field, q.value, o.searchLagMs);
      return c.json({ object: 'search_result', data, has_more: false });
    });
  }
  app.get('/v1/charges/:id', (c) => {
    const charge = o.store.charge(c.req.param('id'));
    if (charge === undefined) {
      const e = stripeError(404, 'invalid_request_error', 'resource_missing', 'No such charge.');
      return c.json(e.body as object, 404);
    }
    return c.json(charge);
  });
  return app;
}
