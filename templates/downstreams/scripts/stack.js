// @ts-check
// This project on one machine, for `npm start` and the tests, each part a real process: a Temporal dev server (or
// the one TEMPORAL_ADDRESS names), a PostgreSQL (DATABASE_URL, else a private one from this machine's binaries),
// the payment provider stand-in with its own SQLite storage, the team's orders service on that PostgreSQL, and a
// `ledgerloop worker`. The worker reaches both downstreams through a loopback fault proxy each (`arm` loses or
// holds their answers on purpose); the provider's own admin listener can kill it after a commit. `cli()` runs any
// `ledgerloop` command against them; `stop()` stops everything.
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { Pool } = require('pg');
const { openServiceDatabase } = require('ledgerloop/services');
const { startDevServer, startFaultProxy, startTestPostgres, VENDOR_PAYMENTS_MAIN } = require('ledgerloop/testing');
const { databaseOf } = require('../src/orders-service');

const ROOT = path.resolve(__dirname, '..');
const PACKAGE = path.dirname(require.resolve('ledgerloop/package.json'));
const BIN = path.join(PACKAGE, require('ledgerloop/package.json').bin.ledgerloop);
const KEYS = path.join(ROOT, '.ledgerloop', 'keys');

/** @typedef {{ code: number, out: string, err: string }} CliRun */
/** @typedef {import('node:child_process').ChildProcess} Child */

/**
 * Runs `ledgerloop <args>` in the project folder and collects what it printed.
 * @param {readonly string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<CliRun>}
 */
function runCli(args, env) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, out, err })));
}

/**
 * Spawns a long-running process and resolves with its first stdout line that is JSON (its "ready" line).
 * @param {string} what
 * @param {readonly string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{ child: Child, ready: Record<string, any> }>}
 */
function startProcess(what, args, env) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${what} did not start in 120 s: ${err}`));
    }, 120_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      clearTimeout(timer);
      resolve({ child, ready: JSON.parse(line) });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready: ${err}`));
    });
  });
}

/**
 * @param {Child} child
 * @param {NodeJS.Signals} [signal]
 */
function stopProcess(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve(undefined));
    child.kill(signal);
  });
}

/**
 * Starts everything (see the module comment), on a task queue of its own.
 * @param {string} name a label for the data folder and the task queue
 */
async function startStack(name) {
  const id = `${name}-${Date.now().toString(36)}`;
  const dataDir = path.join(ROOT, '.data', id);
  fs.mkdirSync(dataDir, { recursive: true });
  const base = { ...process.env, NO_COLOR: '1' };
  if (!fs.existsSync(path.join(KEYS, 'jwks.json'))) {
    const keys = await runCli(['keys'], base);
    if (keys.code !== 0) throw new Error(`ledgerloop keys failed: ${keys.err}`);
  }
  /** @type {Child[]} */
  const children = [];
  /** @type {Array<() => Promise<unknown>>} */
  const stops = [];
  const stopAll = async () => {
    await Promise.all(children.map((c) => stopProcess(c)));
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const pg = await startTestPostgres({ dir: path.join(dataDir, 'postgres') });
    stops.push(() => pg.stop());
    const server = process.env.TEMPORAL_ADDRESS
      ? undefined
      : await startDevServer({ headless: true, ephemeral: true, logFile: path.join(dataDir, 'temporal.log') });
    if (server) stops.push(() => server.stop());
    // The provider stand-in's API key and admin token: generated per stack, never printed.
    const vendorEnv = {
      ...base,
      VENDOR_PAYMENTS_API_KEY: `sk_test_${randomBytes(12).toString('hex')}`,
      LEDGERLOOP_ADMIN_TOKEN: randomBytes(24).toString('hex'),
    };
    const vendorDb = path.join(dataDir, 'vendor.db');
    /** @param {number} port */
    const vendorArgs = (port) => [
      VENDOR_PAYMENTS_MAIN,
      ...['--db', vendorDb, '--port', String(port), '--admin-port', '0', '--lab'],
    ];
    let vendor = await startProcess('the payments provider', vendorArgs(0), vendorEnv);
    children.push(vendor.child);
    const paymentsUrl = String(vendor.ready.url);
    const capabilityKeys = path.join(KEYS, 'jwks.json');
    const ordersEnv = { ...base, DATABASE_URL: pg.url, LEDGERLOOP_CAPABILITY_KEYS: capabilityKeys };
    // The orders service's storage: a schema of its own in that database, named from this path.
    const ordersDb = path.join(dataDir, 'orders.db');
    /** @param {number} port */
    const startOrders = (port) =>
      startProcess(
        'the orders service',
        [path.join(ROOT, 'src', 'orders-main.js'), '--db', ordersDb, '--port', String(port)],
        ordersEnv,
      );
    let orders = await startOrders(0);
    children.push(orders.child);
    const ordersUrl = String(orders.ready.url);
    const proxies = { payments: await startFaultProxy(paymentsUrl), orders: await startFaultProxy(ordersUrl) };
    for (const proxy of Object.values(proxies)) stops.push(() => proxy.close());
    const env = {
      ...base,
      ...(server ? { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace } : {}),
      PAYMENTS_URL: proxies.payments.url,
      PAYMENTS_API_KEY: vendorEnv.VENDOR_PAYMENTS_API_KEY,
      ORDERS_URL: proxies.orders.url,
      SHOP_TASK_QUEUE: `shop-${id}`,
    };
    /** @type {Child} */
    let worker = (await startProcess('the worker', [BIN, 'worker'], env)).child;
    const pool = new Pool({ connectionString: await databaseOf(pg.url, ordersDb), max: 2 });
    stops.push(() => pool.end());
    /**
     * @param {string} method
     * @param {string} route
     * @param {unknown} [body]
     */
    const vendorAdmin = async (method, route, body) => {
      const res = await fetch(`${vendor.ready.adminUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${vendorEnv.LEDGERLOOP_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!res.ok) throw new Error(`vendor admin ${method} ${route}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    return {
      address: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
      taskQueue: env.SHOP_TASK_QUEUE,
      postgres: pg.source,
      /** @param {readonly string[]} args */
      cli: (args) => runCli(args, env),
      /** The charges or refunds the provider holds under a metadata key, counted in its own database. */
      /** @param {'charges' | 'refunds'} table @param {string} key */
      vendorCount(table, key) {
        const db = openServiceDatabase(vendorDb);
        try {
          const row = db
            .prepare(`SELECT count(*) AS n FROM ${table} WHERE json_extract(metadata, '$.ledgerloop_key') = ?`)
            .get(key);
          return /** @type {{ n: number }} */ (row).n;
        } finally {
          db.close();
        }
      },
      /** The orders the team's PostgreSQL holds under an order id. */
      /** @param {string} order */
      async orderCount(order) {
        const r = await pool.query('SELECT count(*)::int AS n FROM orders WHERE order_id = $1', [order]);
        return /** @type {number} */ (r.rows[0].n);
      },
      /**
       * Arms a fault in the proxy in front of `service`: `{ at: 'after_response' | 'before_forward', do:
       * 'drop_response' | 'delay' | 'error_5xx', method, path, occurrence, times, ms }`.
       * @param {'payments' | 'orders'} service
       * @param {import('ledgerloop/testing').ProxyFault} fault
       */
      arm: (service, fault) => proxies[service].arm(fault),
      /** How often each fault armed on `service`'s proxy fired. @param {'payments' | 'orders'} service */
      fired: (service) => proxies[service].fired(),
      /** The requests `service`'s proxy forwarded, by `METHOD path`. @param {'payments' | 'orders'} service */
      forwarded: (service) => proxies[service].forwarded,
      /** Disarms every proxy fault and every fault of the provider stand-in, and zeroes the proxies' counts. */
      async clearFaults() {
        for (const proxy of Object.values(proxies)) {
          proxy.clear();
          proxy.forwarded.clear();
        }
        await vendorAdmin('DELETE', '/admin/faults');
      },
      /** SIGKILLs the orders service and starts it again on its port and database. */
      async restartOrders() {
        await stopProcess(orders.child, 'SIGKILL');
        orders = await startOrders(Number(new URL(ordersUrl).port));
        children.push(orders.child);
      },
      /** Arms a fault in the provider stand-in (its admin listener): `{ at, do, path, times, ms }`. */
      /** @param {Record<string, unknown>} rule */
      armVendor: (rule) => vendorAdmin('POST', '/admin/faults', rule),
      /** The provider's armed faults, with how often each fired. */
      vendorFaults: () => /** @type {Promise<Array<{ fired: number }>>} */ (vendorAdmin('GET', '/admin/faults')),
      /** Resolves when the provider process exits (a `kill` fault), after starting it again on its database. */
      async restartVendorWhenItDies() {
        await new Promise((resolve) =>
          vendor.child.exitCode === null ? vendor.child.once('exit', resolve) : resolve(0),
        );
        vendor = await startProcess('the payments provider', vendorArgs(Number(new URL(paymentsUrl).port)), vendorEnv);
        children.push(vendor.child);
      },
      /** SIGKILLs the worker and starts a new one on the same task queue. */
      async replaceWorker() {
        await stopProcess(worker, 'SIGKILL');
        worker = (await startProcess('the worker', [BIN, 'worker'], env)).child;
      },
      async stop() {
        await stopProcess(worker);
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

module.exports = { startStack };
