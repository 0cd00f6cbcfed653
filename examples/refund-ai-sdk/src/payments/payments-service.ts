/**
 * The payments service the refund agent acts on: someone else's HTTP API in the style of a card processor, with
 * its own storage (SQLite). It knows orders (who paid how much) and refunds, and it deduplicates refunds by an
 * `Idempotency-Key` header the way payment APIs do: the same key with the same body answers the retained refund;
 * the same key with another body is 409; a refund beyond what is left of the order is 422.
 *
 *   GET  /v1/orders/:orderId                         the order and what was refunded of it
 *   POST /v1/refunds         (Idempotency-Key)       { orderId, amountMinor, currency } -> 201 the refund
 *   GET  /v1/refunds?idempotency_key=K | ?order_id=O  the refunds found (a lookup by key or by order)
 *
 * `loseNextResponses(n)` commits the next n refunds and drops the connection instead of answering: the lost
 * response a retry must not turn into a second refund.
 */
import Database from 'better-sqlite3';
import { z } from 'zod';
import {
  closeServer,
  createHttpServer,
  dropConnection,
  HttpError,
  json,
  listen,
  readJsonBody,
  Router,
} from 'ledgerloop/services';

const RefundBody = z.strictObject({
  orderId: z.string().min(1).max(64),
  amountMinor: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[A-Z]{3}$/),
});

export interface Order {
  readonly orderId: string;
  readonly customer: string;
  readonly amountMinor: number;
  readonly currency: string;
}

export interface Refund {
  readonly refundId: string;
  readonly orderId: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly idempotencyKey: string;
}

export interface PaymentsService {
  readonly url: string;
  seedOrder(order: Order): void;
  /** Every refund in the service's own storage. */
  refunds(): Refund[];
  /** How many refund requests reached the service (answered or not). */
  refundRequests(): number;
  loseNextResponses(n: number): void;
  close(): Promise<void>;
}

export async function startPaymentsService(dbPath: string): Promise<PaymentsService> {
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, customer TEXT NOT NULL,
             amount_minor INTEGER NOT NULL, currency TEXT NOT NULL);
           CREATE TABLE IF NOT EXISTS refunds (refund_id TEXT PRIMARY KEY, order_id TEXT NOT NULL,
             amount_minor INTEGER NOT NULL, currency TEXT NOT NULL, idempotency_key TEXT NOT NULL UNIQUE,
             body TEXT NOT NULL);`);
  const refundCols = `refund_id AS refundId, order_id AS orderId, amount_minor AS amountMinor, currency,
                      idempotency_key AS idempotencyKey`;
  const orderOf = db.prepare<[string], { orderId: string; customer: string; amountMinor: number; currency: string }>(
    'SELECT order_id AS orderId, customer, amount_minor AS amountMinor, currency FROM orders WHERE order_id = ?',
  );
  const refundedOf = db.prepare<[string], { total: number }>(
    'SELECT COALESCE(SUM(amount_minor), 0) AS total FROM refunds WHERE order_id = ?',
  );
  const byKey = db.prepare<[string], Refund & { body: string }>(
    `SELECT ${refundCols}, body FROM refunds WHERE idempotency_key = ?`,
  );
  const byOrder = db.prepare<[string], Refund>(`SELECT ${refundCols} FROM refunds WHERE order_id = ?`);
  const insert = db.prepare('INSERT INTO refunds VALUES (?, ?, ?, ?, ?, ?)');
  let requests = 0;
  let toLose = 0;

  const refund = db.transaction((key: string, body: z.infer<typeof RefundBody>): [number, unknown] => {
    const text = JSON.stringify(body);
    const earlier = byKey.get(key);
    if (earlier) {
      if (earlier.body !== text) return [409, { error: 'idempotency_key_reused', message: 'other parameters' }];
      const { body: _body, ...retained } = earlier;
      return [201, retained];
    }
    const order = orderOf.get(body.orderId);
    if (!order) return [404, { error: 'order_not_found', message: `no order ${body.orderId}` }];
    if (order.currency !== body.currency) return [422, { error: 'currency_mismatch', message: order.currency }];
    if (refundedOf.get(body.orderId)!.total + body.amountMinor > order.amountMinor)
      return [422, { error: 'refund_exceeds_order', message: 'more than what is left of the order' }];
    const refundId = `re_${requests}_${Date.now().toString(36)}`;
    insert.run(refundId, body.orderId, body.amountMinor, body.currency, key, text);
    return [201, { refundId, ...body, idempotencyKey: key }];
  });

  const router = new Router()
    .on('GET', '/v1/orders/:orderId', (c) => {
      const order = orderOf.get(c.req.param('orderId') ?? '');
      if (!order) throw new HttpError(404, 'order_not_found', 'no such order');
      return json(200, { ...order, refundedMinor: refundedOf.get(order.orderId)!.total });
    })
    .on('POST', '/v1/refunds', async (c) => {
      requests += 1;
      const key = c.req.header('idempotency-key');
      if (key === undefined || key === '') throw new HttpError(400, 'idempotency_key_missing', 'required');
      const body = RefundBody.safeParse(await readJsonBody(c));
      if (!body.success) throw new HttpError(400, 'invalid_request', body.error.message);
      const [status, answer] = refund(key, body.data);
      if (status === 201 && toLose > 0) {
        toLose -= 1;
        return dropConnection(c); // committed, never answered
      }
      return json(status, answer);
    })
    .on('GET', '/v1/refunds', (c) => {
      const key = c.req.query('idempotency_key');
      const order = c.req.query('order_id');
      const found = key ? [byKey.get(key)].filter((r) => r !== undefined) : order ? byOrder.all(order) : [];
      return json(200, { data: found.map(({ body: _b, ...r }: Refund & { body?: string }) => r) });
    });

  const server = createHttpServer(router.fetch);
  const port = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    seedOrder: (o) =>
      void db
        .prepare('INSERT OR REPLACE INTO orders VALUES (?, ?, ?, ?)')
        .run(o.orderId, o.customer, o.amountMinor, o.currency),
    refunds: () => db.prepare<[], Refund>(`SELECT ${refundCols} FROM refunds ORDER BY rowid`).all(),
    refundRequests: () => requests,
    loseNextResponses: (n) => void (toLose = n),
    close: async () => {
      await closeServer(server);
      db.close();
    },
  };
}
