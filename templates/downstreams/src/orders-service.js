// @ts-check
// The team's own orders service: a Hono app on the team's own PostgreSQL. `operationMiddleware` and
// `operationRoutes` from ledgerloop/services add Ledgerloop's contract to it: the order row, its key row and the
// fence check commit in one transaction (a lost response is answered from the key row; a fenced-out worker's
// request is refused inside the transaction); lookup and seal read the same table.
const { Hono } = require('hono');
const { Pool } = require('pg');
const { z } = require('zod');
const { operationMiddleware, operationRoutes, PgOperations } = require('ledgerloop/services');

const OrderBody = z.strictObject({
  tenant: z.string(),
  order: z.string(),
  customer: z.string(),
  amountMinor: z.number().int().positive(),
});

/** The team's own table: what the orders service keeps, whatever Ledgerloop does. */
const ORDERS_TABLE = `CREATE TABLE IF NOT EXISTS orders (
  tenant TEXT NOT NULL, order_id TEXT NOT NULL, customer TEXT NOT NULL, amount_minor INTEGER NOT NULL,
  PRIMARY KEY (tenant, order_id))`;

/**
 * The app, once its table exists.
 * @param {{ databaseUrl: string, capabilityKeys: import('ledgerloop/services').CapabilityKeySet }} opts
 */
async function ordersApp(opts) {
  const pool = new Pool({ connectionString: opts.databaseUrl, max: 1 });
  try {
    await pool.query(ORDERS_TABLE);
  } finally {
    await pool.end();
  }
  const ops = new PgOperations({ url: opts.databaseUrl, setting: 'DATABASE_URL' });
  const caller = { service: 'orders', capabilityKeys: opts.capabilityKeys };
  /** @type {Hono<import('ledgerloop/services').OperationEnv>} */
  const app = new Hono();
  app.post('/v1/orders', operationMiddleware(ops, { ...caller, scope: 'orders.record' }), (c) => {
    const body = OrderBody.parse(c.var.operationBody); // its hash already checked against X-Arguments-Hash
    return c.var.runOperation(async (tx) => {
      await tx.query('INSERT INTO orders (tenant, order_id, customer, amount_minor) VALUES ($1, $2, $3, $4)', [
        body.tenant,
        body.order,
        body.customer,
        body.amountMinor,
      ]);
      const receipt = `order:${body.order}`;
      return { receipt, result: { receipt, order: body.order, amountMinor: body.amountMinor } };
    });
  });
  app.route('/', operationRoutes(ops, caller)); // GET /v1/operations/:key, POST /v1/operations/:key/seal
  return { app, close: () => ops.close() };
}

module.exports = { ordersApp, ORDERS_TABLE };
