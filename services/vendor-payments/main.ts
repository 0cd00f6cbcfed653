/**
 * A payment-provider stand-in in its own process, with its own SQLite storage, following a public payment API's
 * documented idempotency semantics (Stripe's: see idempotency.ts). It speaks none of Ledgerloop's contract: no
 * `X-Arguments-Hash`, no fence, no capability, no seal. Tests, the fault lab and `ledgerloop init` projects run it.
 *
 *   VENDOR_PAYMENTS_API_KEY=sk_test_… node -r tsx/cjs services/vendor-payments/main.ts --db PATH [--port N]
 *       [--retention-ms N] [--search-lag-ms N] [--admin-port N [--lab]]
 *
 * It refuses to start without `VENDOR_PAYMENTS_API_KEY` (at least 16 characters). `--admin-port` serves, on
 * 127.0.0.1 with `LEDGERLOOP_ADMIN_TOKEN` as bearer: `GET /admin/stats` (counted from its own database, also as `dispatchCount` and `businessEffectCount`, the kit's names), `POST
 * /admin/clock` `{ "advanceMs": n }` (the server's clock, so a key's retention can pass), and with `--lab`
 * `POST /admin/faults` (a rule of faults.ts) and `DELETE /admin/faults`. Once listening it prints one line,
 * `{"service":"vendor-payments","url":…,"pid":…[,"adminUrl":…]}`, and it stops cleanly on SIGTERM or SIGINT.
 */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { bearerMatches, checkAdminToken, ADMIN_TOKEN_ENV } from '../admin-listener';
import { vendorApp } from './app';
import { VendorFaultRule, VendorFaults } from './faults';
import { VendorStore } from './store';

export const VENDOR_API_KEY_ENV = 'VENDOR_PAYMENTS_API_KEY';
const DAY_MS = 86_400_000;

type FetchCallback = Parameters<typeof serve>[0]['fetch'];

function listen(fetch: FetchCallback, port: number, hostname: string) {
  return new Promise<{ server: ServerType; port: number }>((resolve, reject) => {
    const server = serve({ fetch, port, hostname }, (info: AddressInfo) => resolve({ server, port: info.port }));
    server.once('error', reject);
  });
}

function adminApp(store: VendorStore, faults: VendorFaults | undefined, token: string): Hono {
  const admin = new Hono();
  admin.use('*', async (c, next) => {
    if (!bearerMatches(c.req.header('authorization'), token)) return c.json({ error: 'Admin.Unauthorized' }, 401);
    await next();
  });
  admin.get('/admin/stats', (c) => {
    const charges = (store.db.prepare(`SELECT count(*) AS n FROM charges`).get() as { n: number }).n;
    const refunds = (store.db.prepare(`SELECT count(*) AS n FROM refunds`).get() as { n: number }).n;
    const requests = store.count('requests');
    // Also as the services kit counts (`KeyStats`), so the fault protocol reads this storage like any service's.
    return c.json({
      charges,
      refunds,
      requests,
      replays: store.count('replays'),
      dispatchCount: requests,
      businessEffectCount: charges + refunds,
    });
  });
  admin.post('/admin/clock', async (c) => {
    const { advanceMs } = (await c.req.json()) as { advanceMs?: unknown };
    if (typeof advanceMs !== 'number' || !Number.isSafeInteger(advanceMs) || advanceMs < 0)
      return c.json({ error: 'Request.Invalid', message: 'advanceMs is a non-negative integer' }, 400);
    return c.json({ now: store.advanceClock(advanceMs) });
  });
  if (faults !== undefined) {
    admin.post('/admin/faults', async (c) => {
      const parsed = VendorFaultRule.safeParse(await c.req.json().catch(() => undefined));
      if (!parsed.success) return c.json({ error: 'Request.Invalid', message: parsed.error.message }, 400);
      const id = faults.arm(parsed.data);
      return c.json({ id, armed: faults.state().length });
    });
    admin.get('/admin/faults', (c) => c.json({ rules: faults.state() }));
    admin.delete('/admin/faults', (c) => {
      faults.clear();
      return c.json({ cleared: true });
    });
  }
  return admin;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      port: { type: 'string', default: '0' },
      'retention-ms': { type: 'string', default: String(DAY_MS) },
      'search-lag-ms': { type: 'string', default: '0' },
      'admin-port': { type: 'string' },
      lab: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.db === undefined) throw new Error('--db PATH is required');
  const apiKey = process.env[VENDOR_API_KEY_ENV] ?? '';
  if (apiKey.length < 16) throw new Error(`${VENDOR_API_KEY_ENV} (at least 16 characters) is required`);
  const int = (name: string, text: string): number => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
    return n;
  };
  const store = new VendorStore(values.db);
  const faults = values.lab ? new VendorFaults() : undefined;
  const app = vendorApp({
    store,
    faults: faults ?? new VendorFaults(),
    apiKey,
    retentionMs: int('retention-ms', values['retention-ms']),
    searchLagMs: int('search-lag-ms', values['search-lag-ms']),
  });
  const api = await listen(app.fetch as FetchCallback, int('port', values.port), '127.0.0.1');
  let admin: { server: ServerType; port: number } | undefined;
  if (values['admin-port'] !== undefined) {
    const token = checkAdminToken(process.env[ADMIN_TOKEN_ENV]);
    admin = await listen(
      adminApp(store, faults, token).fetch as FetchCallback,
      int('admin-port', values['admin-port']),
      '127.0.0.1',
    );
  } else if (values.lab) {
    throw new Error('--lab needs the admin listener (--admin-port N)');
  }
  const stop = (): void => {
    api.server.close();
    admin?.server.close();
    store.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const ready = {
    service: 'vendor-payments',
    url: `http://127.0.0.1:${api.port}`,
    pid: process.pid,
    ...(admin ? { adminUrl: `http://127.0.0.1:${admin.port}`, adminBoundAddress: '127.0.0.1' } : {}),
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`vendor-payments: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
