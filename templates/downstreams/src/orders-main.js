// @ts-check
// The orders service as a process, started the way every Ledgerloop service is (`runServiceMain`):
//
//   node src/orders-main.js --db NAME [--port N] [--admin-port N [--lab]]
//
// `DATABASE_URL` names its PostgreSQL database and `--db NAME` its storage there: a schema of its own, named from
// NAME and created on first use (so `ledgerloop faults` gives each case fresh storage, and a restart on the same
// NAME finds its orders). NAME itself is left as an empty file: the lab's readers of the SQLite kit's tables find
// none in it. `LEDGERLOOP_CAPABILITY_KEYS` is the key set it verifies callers with; it refuses to start without
// either. `--admin-port` (with `LEDGERLOOP_ADMIN_TOKEN`) serves its counts on 127.0.0.1, `--lab` its faults too.
// Once listening it prints one JSON line with its URL; it stops on SIGTERM or SIGINT.
const fs = require('node:fs');
const path = require('node:path');
const { serve } = require('@hono/node-server');
const { keySetFromEnv, runServiceMain } = require('ledgerloop/services');
const { databaseOf, ordersApp } = require('./orders-service');

/**
 * @param {import('@hono/node-server').Options['fetch']} fetch
 * @param {number} port
 * @returns {Promise<{ server: import('@hono/node-server').ServerType, url: string }>}
 */
function listen(fetch, port) {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname: '127.0.0.1' }, (info) =>
      resolve({ server, url: `http://127.0.0.1:${info.port}` }),
    );
    server.once('error', reject);
  });
}

/** @param {import('@hono/node-server').ServerType} server */
const close = (server) => new Promise((resolve) => server.close(() => resolve(undefined)));

runServiceMain('orders', async (flags) => {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL (postgres://...) is required');
  const capabilityKeys = keySetFromEnv();
  if (capabilityKeys === undefined) throw new Error('LEDGERLOOP_CAPABILITY_KEYS (the key set) is required');
  const databaseUrl = await databaseOf(serverUrl, path.resolve(flags.dbPath));
  fs.closeSync(fs.openSync(flags.dbPath, 'a'));
  const orders = await ordersApp({
    databaseUrl,
    capabilityKeys,
    ...(flags.admin ? { admin: { token: flags.admin.token, lab: flags.admin.lab } } : {}),
  });
  const api = await listen(orders.app.fetch, flags.port);
  const admin = orders.admin && flags.admin ? await listen(orders.admin.fetch, flags.admin.port) : undefined;
  return {
    url: api.url,
    ...(admin ? { adminUrl: admin.url, adminBoundAddress: '127.0.0.1' } : {}),
    async close() {
      await close(api.server);
      if (admin) await close(admin.server);
      await orders.close();
    },
  };
});
