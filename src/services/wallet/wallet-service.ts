/**
 * The wallet downstream service: an HTTP server over a SQLite (WAL) database that debits and refunds accounts
 * under the Stripe-like idempotency contract of `src/downstream/protocol.ts`, with fault injection for tests.
 *
 * Business routes: `POST /v1/debits`, `POST /v1/refunds`, `GET /v1/accounts/:tenant/:account`.
 * Admin: `POST /admin/accounts` (seed). Standard routes: see `registerStandardRoutes`.
 */
import BetterSqlite3 from 'better-sqlite3';
import { DownstreamErrorCode } from '../../downstream/protocol';
import { FaultInjector } from '../faults';
import { closeServer, createHttpServer, HttpError, listen, readJsonBody, Router, sendJson } from '../http-kit';
import { IdempotencyStore } from '../idempotency-store';
import { mutationHandler, type ServiceRuntime } from '../idempotent-route';
import { registerStandardRoutes } from '../standard-routes';
import {
  applyDebit,
  applyRefund,
  DebitBody,
  getBalance,
  migrateWallet,
  RefundBody,
  SeedAccountBody,
  seedAccount,
} from './ledger';

/** The idempotency scope of a debit: the effect a debit key protects. */
export const WALLET_CHARGE_SCOPE = 'wallet.charge';
/** The idempotency scope of a refund. */
export const WALLET_REFUND_SCOPE = 'wallet.refund';

/** Options of `createWalletService`. */
export interface WalletServiceOptions {
  /** SQLite database file (created if missing). */
  readonly dbPath: string;
  /** Idempotency-key retention; default 24 h. */
  readonly retentionMs?: number;
  /** TCP port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Interface to bind; default 127.0.0.1. */
  readonly host?: string;
}

/** A running wallet service. */
export interface WalletService {
  readonly url: string;
  readonly port: number;
  /** Stops the server (dropping open connections) and closes the database. */
  close(): Promise<void>;
}

/** Opens the database, registers the routes and starts listening. */
export async function createWalletService(options: WalletServiceOptions): Promise<WalletService> {
  const db = new BetterSqlite3(options.dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  let runtime: ServiceRuntime;
  try {
    migrateWallet(db);
    const store = new IdempotencyStore({
      db,
      ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    });
    runtime = { db, store, faults: new FaultInjector() };
  } catch (err) {
    db.close();
    throw err;
  }
  const router = registerStandardRoutes(new Router(), 'wallet', runtime)
    .on(
      'POST',
      '/v1/debits',
      mutationHandler(runtime, { scope: WALLET_CHARGE_SCOPE, schema: DebitBody, apply: applyDebit }),
    )
    .on(
      'POST',
      '/v1/refunds',
      mutationHandler(runtime, { scope: WALLET_REFUND_SCOPE, schema: RefundBody, apply: applyRefund }),
    )
    .on('GET', '/v1/accounts/:tenant/:account', ({ res, params }) => {
      const balance = getBalance(db, params['tenant'] ?? '', params['account'] ?? '');
      if (balance === undefined) throw new HttpError(404, DownstreamErrorCode.NotFound, 'no such account');
      sendJson(res, 200, balance);
    })
    .on('POST', '/admin/accounts', async ({ req, res }) => {
      const parsed = SeedAccountBody.safeParse(await readJsonBody(req));
      if (!parsed.success) throw new HttpError(400, DownstreamErrorCode.BadRequest, parsed.error.message);
      sendJson(res, 200, seedAccount(db, parsed.data));
    });
  const server = createHttpServer(router);
  const host = options.host ?? '127.0.0.1';
  let port: number;
  try {
    port = await listen(server, options.port ?? 0, host);
  } catch (err) {
    db.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () => {
      closing ??= closeServer(server).then(() => {
        db.close();
      });
      return closing;
    },
  };
}
