// @ts-check
// The orders service as a process: `DATABASE_URL` names its PostgreSQL, `LEDGERLOOP_CAPABILITY_KEYS` the key set
// it verifies callers with (it refuses to start without either). `--port N` (default 4500; 0: any free port).
// Once listening it prints one JSON line with its URL; it stops on SIGTERM or SIGINT.
const { serve } = require('@hono/node-server');
const { keySetFromEnv } = require('ledgerloop/services');
const { ordersApp } = require('./orders-service');

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL (postgres://...) is required');
  const capabilityKeys = keySetFromEnv();
  if (capabilityKeys === undefined) throw new Error('LEDGERLOOP_CAPABILITY_KEYS (the key set) is required');
  const i = process.argv.indexOf('--port');
  const port = i >= 0 ? Number(process.argv[i + 1]) : 4500;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0 to 65535');
  const orders = await ordersApp({ databaseUrl, capabilityKeys });
  const server = serve({ fetch: orders.app.fetch, port, hostname: '127.0.0.1' }, (info) => {
    process.stdout.write(`${JSON.stringify({ service: 'orders', url: `http://127.0.0.1:${info.port}` })}\n`);
  });
  const stop = () => server.close(() => void orders.close().then(() => process.exit(0)));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`orders: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
