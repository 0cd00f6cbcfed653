/**
 * The vendor payments stand-in (services/vendor-payments): a process of its own, with its own SQLite storage,
 * following a public payment API's documented idempotency semantics (a key kept 24 h, 409 while the same key is in
 * flight, 400 for the same key with other parameters, search by metadata). It speaks none of Ledgerloop's
 * contract. A project's tests spawn it with plain node:
 *
 *   spawn(process.execPath, [VENDOR_PAYMENTS_MAIN, '--db', file, '--port', '0'],
 *     { env: { ...process.env, VENDOR_PAYMENTS_API_KEY: 'sk_test_…' } });   // prints {"url":…} when it listens
 */
import { packageModule } from '../../src/package-paths';

/** The file the vendor stand-in runs from (compiled JavaScript in an installed package). */
export const VENDOR_PAYMENTS_MAIN = packageModule('services', 'vendor-payments', 'main');
