/**
 * The wallet downstream service: an HTTP server over a SQLite (WAL) database that debits and refunds accounts
 * under the Stripe-like idempotency contract of `src/downstream/protocol.ts`, with fault injection for tests.
 *
 * Business routes: `POST /v1/debits`, `POST /v1/refunds` (by `debitOperationKey` or `debitReceipt`),
 * `GET /v1/accounts/:tenant/:account`. Admin listener: `POST /admin/accounts` (seed). Standard routes: see
 * `registerStandardRoutes`.
 */
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { HttpError, json, readJsonBody } from '../http-kit';
import { mutation } from '../idempotent-route';
import { readRoute } from '../read-route';
import { startService, type RunningService, type ServiceDefinition, type ServiceHostOptions } from '../service-host';
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
export type WalletServiceOptions = ServiceHostOptions;

/** A running wallet service. */
export type WalletService = Omit<RunningService, 'runtime'>;

/** The wallet: its tables and routes. */
export const walletDefinition: ServiceDefinition = {
  name: 'wallet',
  migrate: migrateWallet,
  mutations: {
    '/v1/debits': mutation({ scope: WALLET_CHARGE_SCOPE, schema: DebitBody, apply: applyDebit }),
    '/v1/refunds': mutation({ scope: WALLET_REFUND_SCOPE, schema: RefundBody, apply: applyRefund }),
  },
  reads: readRoute('/v1/accounts/:tenant/:account', getBalance, 'no such account'),
  adminRoutes(router, { db }) {
    router.on('POST', '/admin/accounts', async (c) => {
      const parsed = SeedAccountBody.safeParse(await readJsonBody(c));
      if (!parsed.success) throw new HttpError(400, DownstreamErrorCode.BadRequest, parsed.error.message);
      return json(200, seedAccount(db, parsed.data));
    });
  },
};

/** Opens the database, registers the routes and starts listening. */
export async function createWalletService(options: WalletServiceOptions): Promise<WalletService> {
  const { runtime: _runtime, ...service } = await startService(walletDefinition, options);
  return service;
}
