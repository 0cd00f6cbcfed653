// @ts-check
// The team's own orders service: a Hono app on the team's own PostgreSQL. `operationMiddleware` and
// `operationRoutes` from ledgerloop/services add Ledgerloop's contract to it: the order row, its key row and the
// fence check commit in one transaction (a lost response is answered from the key row; a fenced-out worker's
// request is refused inside the transaction); lookup and seal read the same table. In a lab start (the fault
// protocol's), `labAdminApp` counts its orders and arms the faults the middleware runs around that transaction.
const { createHash } = require('node:crypto');
const { Hono } = require('hono');
const { Pool } = require('pg');
const { z } = require('zod');
const {
  FaultInjector,
  labAdminApp,
  operationMiddleware,
  operationRoutes,
  OPERATIONS_TABLE,
  PgOperations,
} = require('ledgerloop/services');

const OrderBody = z.strictObject({
  tenant: z.string(),
  order: z.string(),
  customer: z.string(),
  amountMinor: z.number().int().positive(),
});

/**
 * The team's own table: what the orders service keeps, whatever Ledgerloop does. It has no unique constraint on
 * the order id: what keeps an order once is its key row alone, so the fault protocol's control (a fresh key on
 * every retry) shows the duplicate the key prevents.
 */
const ORDERS_TABLE = `CREATE TABLE IF NOT EXISTS orders (
  id BIGSERIAL PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, customer TEXT NOT NULL,
  amount_minor INTEGER NOT NULL)`;

/**
 * The storage of its own that a storage name (`--db NAME`: each fault-protocol case gives each service one) has in
 * the database `databaseUrl` names: a schema `orders_` and 16 hex digits of the name's hash, created on first use,
 * and the URL that puts it first on the search path. The same name finds the same schema again, so a restarted
 * service keeps its orders. (A schema, not a database: creating one needs no CREATEDB right.)
 * @param {string} databaseUrl
 * @param {string} name
 */
async function databaseOf(databaseUrl, name) {
  const schema = `orders_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((/** @type {any} */ err) => {
      if (err?.code !== '23505' && err?.code !== '42P06') throw err; // another process created it first
    });
  } finally {
    await pool.end();
  }
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/**
 * The app, once its table exists, and with `admin` its admin app (a separate listener, 127.0.0.1 only).
 * @param {{ databaseUrl: string, capabilityKeys: import('ledgerloop/services').CapabilityKeySet, admin?: { token: string, lab: boolean } }} opts
 */
async function ordersApp(opts) {
  const pool = new Pool({ connectionString: opts.databaseUrl, max: 1 });
  try {
    await pool.query(ORDERS_TABLE);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const ops = new PgOperations({ url: opts.databaseUrl, setting: 'DATABASE_URL' });
  const faults = opts.admin?.lab ? new FaultInjector() : undefined;
  const caller = { service: 'orders', capabilityKeys: opts.capabilityKeys };
  /** @type {Hono<import('ledgerloop/services').OperationEnv>} */
  const app = new Hono();
  const record = { ...caller, scope: 'orders.record', ...(faults ? { faults } : {}) };
  app.post('/v1/orders', operationMiddleware(ops, record), (c) => {
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
  // Counted in the service's own tables: the key rows it admitted (a seal of an absent key is no request) and
  // the orders it holds.
  const stats = async () => {
    const r = await pool.query(
      `SELECT (SELECT count(*)::int FROM ${OPERATIONS_TABLE} WHERE status <> 'sealed') AS "dispatchCount",
              (SELECT count(*)::int FROM orders) AS "businessEffectCount"`,
    );
    return r.rows[0];
  };
  const admin = opts.admin && labAdminApp({ token: opts.admin.token, ...(faults ? { faults } : {}), stats });
  return { app, admin, close: () => Promise.all([ops.close(), pool.end()]) };
}

module.exports = { ordersApp, databaseOf, ORDERS_TABLE };
