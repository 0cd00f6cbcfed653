/**
 * Process entry of the orders outbox relay, a separate process on the orders database:
 *
 *   node -r tsx/cjs src/services/orders/relay-main.ts --db ORDERS_DB --target NOTIFICATIONS_URL [--poll-ms N]
 *                                                     [--port N]
 *
 * It is its own process so that a relay crash (the injected one included) never takes the orders API down,
 * and a restarted relay shows that delivery resumes from the database alone. Its small HTTP server answers
 * `GET /health`, `GET /admin/relay` (outbox evidence from the database plus this process's counters) and
 * `POST|DELETE /admin/relay/faults` (`{ "crashAfterPublish": n }`: SIGKILL after the n-th publish from now,
 * before acknowledging). `LEDGERLOOP_RELAY_CRASH_AFTER_PUBLISH=n` arms the same fault at start. With
 * `LEDGERLOOP_RELAY_SIGNING_KEY` set (the relay's own Ed25519 key, whose public half the consumer trusts for
 * the event scope only), each delivery attempt carries a capability signed for it.
 * Prints `{"service":"orders-relay","url":...,"pid":N}` once listening.
 */
import { z } from 'zod';
import { DownstreamClient } from '../../downstream/client';
import { RELAY_SIGNING_KEY_ENV, signingKeyFromEnv } from '../../policy/capability-keys';
import { parseAdminBody } from '../body-schemas';
import { closeServer, createHttpServer, listen, Router, sendJson } from '../http-kit';
import { integerFlag, runServiceMain, type ServiceFlags, type Stoppable } from '../service-main';
import { openServiceDatabase } from '../service-host';
import { migrateOrders } from './orders';
import { outboxStats } from './outbox';
import { OutboxRelay } from './relay';

/** The environment variable that arms the crash fault at start. */
export const RELAY_CRASH_ENV = 'LEDGERLOOP_RELAY_CRASH_AFTER_PUBLISH';

const RelayFaultBody = z.strictObject({ crashAfterPublish: z.number().int().min(1).max(1_000_000) });

/** Opens the orders database, starts the relay loop and its admin server. */
export async function startRelayProcess(flags: ServiceFlags): Promise<Stoppable> {
  const target = flags.extra.get('--target');
  if (target === undefined || !/^https?:\/\//.test(target)) throw new Error('--target URL is required');
  const pollMs = integerFlag(flags.extra.get('--poll-ms') ?? '200', '--poll-ms');
  const db = openServiceDatabase(flags.dbPath);
  migrateOrders(db); // idempotent; lets the relay start before the orders service created the tables
  const capabilityKey = signingKeyFromEnv(process.env, RELAY_SIGNING_KEY_ENV);
  const relay = new OutboxRelay({
    db,
    target: new DownstreamClient({ baseUrl: target }),
    pollMs,
    ...(capabilityKey === undefined ? {} : { capabilityKey }),
  });
  const crashAfter = process.env[RELAY_CRASH_ENV];
  if (crashAfter !== undefined && crashAfter !== '') relay.armCrash(integerFlag(crashAfter, RELAY_CRASH_ENV));
  const router = new Router()
    .on('GET', '/health', ({ res }) => sendJson(res, 200, { service: 'orders-relay', status: 'ok' }))
    .on('GET', '/admin/relay', ({ res }) => {
      const relayProcess = {
        publishes: relay.publishes,
        crashArmed: relay.crashArmed,
        lastError: relay.lastError ?? null,
      };
      sendJson(res, 200, { ...outboxStats(db), process: relayProcess });
    })
    .on('POST', '/admin/relay/faults', async ({ req, res }) => {
      const body = await parseAdminBody(req, RelayFaultBody);
      relay.armCrash(body.crashAfterPublish);
      sendJson(res, 201, { armed: true });
    })
    .on('DELETE', '/admin/relay/faults', ({ res }) => {
      relay.disarmCrash();
      sendJson(res, 200, { cleared: true });
    });
  const server = createHttpServer(router);
  const host = '127.0.0.1';
  let port: number;
  try {
    port = await listen(server, flags.port, host);
  } catch (err) {
    db.close();
    throw err;
  }
  // After the ready line is written (runServiceMain writes it synchronously once this resolves).
  setImmediate(() => relay.start());
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    close: () => {
      closing ??= relay
        .stop()
        .then(() => closeServer(server))
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
