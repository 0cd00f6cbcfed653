/**
 * Process entry of the orders outbox relay, a separate process on the orders database:
 *
 *   node -r tsx/cjs services/orders/relay-main.ts --db ORDERS_DB --target NOTIFICATIONS_URL [--poll-ms N]
 *                                                     [--port N] [--admin-port N [--lab]] [--insecure-dev]
 *
 * It is its own process so that a relay crash (the injected one included) never takes the orders API down,
 * and a restarted relay shows that delivery resumes from the database alone. Its small HTTP server answers
 * `GET /health`; its admin listener (only with `--admin-port`, loopback, admin token) answers `GET /admin/relay`
 * (outbox evidence from the database plus this process's counters) and, in a lab start (`--lab`),
 * `POST|DELETE /admin/relay/faults` (`{ "crashAfterPublish": n }`: SIGKILL after the n-th publish from now,
 * before acknowledging); `LEDGERLOOP_RELAY_CRASH_AFTER_PUBLISH=n` arms the same fault at start (lab only). It
 * signs each delivery attempt with its own Ed25519 key (`LEDGERLOOP_RELAY_SIGNING_KEY`, whose public half the
 * consumer trusts for the event scope only) and refuses to start without it unless `--insecure-dev`.
 * Prints `{"service":"orders-relay","url":...,"pid":N}` once listening.
 */
import { z } from 'zod';
import { DownstreamClient } from '../../src/downstream/client';
import { RELAY_SIGNING_KEY_ENV, signingKeyFromEnv } from '../../src/capability/capability-keys';
import { parseAdminBody } from '../body-schemas';
import { ServiceConfigError, startAdminListener, type AdminListener } from '../admin-listener';
import { closeServer, createHttpServer, json, listen, Router } from '../http-kit';
import { integerFlag } from '../../src/flags';
import { runServiceMain, type ServiceFlags, type Stoppable } from '../service-main';
import type { Database } from 'better-sqlite3';
import { openServiceDatabase } from '../service-host';
import { migrateOrders } from './orders';
import { outboxStats } from './outbox';
import { OutboxRelay } from './relay';

/** The environment variable that arms the crash fault at start. */
export const RELAY_CRASH_ENV = 'LEDGERLOOP_RELAY_CRASH_AFTER_PUBLISH';

const RelayFaultBody = z.strictObject({ crashAfterPublish: z.number().int().min(1).max(1_000_000) });

/** The relay's public router (health) and admin router (its evidence; in a lab start, its crash fault). */
function relayRouters(relay: OutboxRelay, db: Database, lab: boolean): { router: Router; adminRouter: Router } {
  const router = new Router().on('GET', '/health', () => json(200, { service: 'orders-relay', status: 'ok' }));
  const adminRouter = new Router().on('GET', '/admin/relay', () => {
    const relayProcess = {
      publishes: relay.publishes,
      crashArmed: relay.crashArmed,
      lastError: relay.lastError ?? null,
    };
    return json(200, { ...outboxStats(db), process: relayProcess });
  });
  if (lab) {
    adminRouter
      .on('POST', '/admin/relay/faults', async (c) => {
        const body = await parseAdminBody(c, RelayFaultBody);
        relay.armCrash(body.crashAfterPublish);
        return json(201, { armed: true });
      })
      .on('DELETE', '/admin/relay/faults', () => {
        relay.disarmCrash();
        return json(200, { cleared: true });
      });
  }
  return { router, adminRouter };
}

/** Opens the orders database, starts the relay loop and its admin server. */
export async function startRelayProcess(flags: ServiceFlags): Promise<Stoppable> {
  const target = flags.extra.get('--target');
  if (target === undefined || !/^https?:\/\//.test(target)) throw new Error('--target URL is required');
  const pollMs = integerFlag(flags.extra.get('--poll-ms') ?? '200', '--poll-ms');
  // Fail closed: the relay's own Ed25519 key (trusted by the consumer for the event scope only).
  const capabilityKey = signingKeyFromEnv(process.env, RELAY_SIGNING_KEY_ENV);
  if (capabilityKey === undefined && !flags.insecureDev) {
    throw new ServiceConfigError(
      'Service.KeysMissing',
      `orders-relay has no capability signing key (${RELAY_SIGNING_KEY_ENV}); refusing to start (--insecure-dev to run unsigned)`,
    );
  }
  const lab = flags.admin?.lab === true;
  const db = openServiceDatabase(flags.dbPath);
  migrateOrders(db); // idempotent; lets the relay start before the orders service created the tables
  const relay = new OutboxRelay({
    db,
    target: new DownstreamClient({ baseUrl: target }),
    pollMs,
    ...(capabilityKey === undefined ? {} : { capabilityKey }),
  });
  const crashAfter = process.env[RELAY_CRASH_ENV];
  if (lab && crashAfter !== undefined && crashAfter !== '') relay.armCrash(integerFlag(crashAfter, RELAY_CRASH_ENV));
  const { router, adminRouter } = relayRouters(relay, db, lab);
  const server = createHttpServer(router.fetch);
  const host = '127.0.0.1';
  let port: number;
  let admin: AdminListener | undefined;
  try {
    port = await listen(server, flags.port, host);
    if (flags.admin !== undefined) admin = await startAdminListener(adminRouter, flags.admin);
  } catch (err) {
    await closeServer(server);
    db.close();
    throw err;
  }
  // After the ready line is written (runServiceMain writes it synchronously once this resolves).
  setImmediate(() => relay.start());
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    ...(admin === undefined ? {} : { adminUrl: admin.url, adminBoundAddress: admin.boundAddress }),
    close: () => {
      closing ??= relay
        .stop()
        .then(() => Promise.all([closeServer(server), admin?.close()]))
        .then(() => {
          db.close();
        });
      return closing;
    },
  };
}

if (require.main === module) {
  runServiceMain('orders-relay', startRelayProcess, ['--target', '--poll-ms']);
}
