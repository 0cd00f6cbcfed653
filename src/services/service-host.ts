/**
 * The process shell every Ledgerloop downstream service shares: open the SQLite database (WAL, full sync),
 * migrate, build the idempotency runtime (with capability verification when a key is configured), release
 * orphaned in-progress keys, register the standard routes and the service's own routes, listen, and close. A service is then only its schemas, its synchronous `apply`
 * functions and a `routes` callback.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { keySetFromEnv, type CapabilityKeySet } from '../policy/capability-keys';
import { SqliteJtiRegistry } from '../policy/capability-replay';
import { FaultInjector } from './faults';
import { closeServer, createHttpServer, listen, Router } from './http-kit';
import { IdempotencyStore } from './idempotency-store';
import type { ServiceRuntime } from './idempotent-route';
import { registerStandardRoutes } from './standard-routes';

/** Where and how a service runs. */
export interface ServiceHostOptions {
  /** SQLite database file (created if missing). */
  readonly dbPath: string;
  /** Idempotency-key retention; default 24 h. */
  readonly retentionMs?: number;
  /** TCP port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Interface to bind; default 127.0.0.1. */
  readonly host?: string;
  /**
   * The public keys capabilities are verified with, by kid; default `LEDGERLOOP_CAPABILITY_KEYS` (a JWKS or a
   * path to one). When there are any, every mutating request must carry a capability for exactly this service,
   * its key, arguments, tenant and scope (else 403); used token ids are kept in the service's database.
   */
  readonly capabilityKeys?: CapabilityKeySet;
}

/** What makes one service: its name, its tables and its business routes. */
export interface ServiceDefinition {
  /** The name in the ready line and `GET /v1/contract`, e.g. `inventory`. */
  readonly name: string;
  /** Creates the service's own tables (idempotent: `CREATE TABLE IF NOT EXISTS`). */
  migrate(db: Database): void;
  /** Registers the business and admin routes on top of the standard ones. */
  routes(router: Router, runtime: ServiceRuntime): void;
}

/** A running service. */
export interface RunningService {
  readonly url: string;
  readonly port: number;
  readonly runtime: ServiceRuntime;
  /** Stops the server (dropping open connections) and closes the database. Safe to call twice. */
  close(): Promise<void>;
}

/** Opens a service database with the pragmas every service uses (several processes may share the file). */
export function openServiceDatabase(dbPath: string): Database {
  const db = new BetterSqlite3(dbPath);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Opens the database, migrates, registers the routes and starts listening. */
export async function startService(
  definition: ServiceDefinition,
  options: ServiceHostOptions,
): Promise<RunningService> {
  const db = openServiceDatabase(options.dbPath);
  let runtime: ServiceRuntime;
  let router: Router;
  try {
    definition.migrate(db);
    const store = new IdempotencyStore({
      db,
      ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    });
    // A record still in progress at start belongs to a process that died before its commit: no effect exists.
    store.recoverOrphans();
    const keys = options.capabilityKeys ?? keySetFromEnv();
    // A token is accepted once, across restarts: the used ids live in this service's database.
    const capabilityKeys = keys?.withReplay(new SqliteJtiRegistry(db));
    runtime = { db, store, faults: new FaultInjector(), serviceName: definition.name, ...(capabilityKeys === undefined ? {} : { capabilityKeys }) };
    router = registerStandardRoutes(new Router(), definition.name, runtime);
    definition.routes(router, runtime);
  } catch (err) {
    db.close();
    throw err;
  }
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
    runtime,
    close: () => {
      closing ??= closeServer(server).then(() => {
        db.close();
      });
      return closing;
    },
  };
}
