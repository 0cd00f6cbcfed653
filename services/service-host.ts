/**
 * The process shell every Ledgerloop downstream service shares: refuse to start without the verification key
 * (unless `insecureDev`), open the SQLite database (WAL, full sync), migrate, build the idempotency runtime,
 * release orphaned in-progress keys, register the standard routes and the service's own routes on the public
 * listener, and (only when enabled) the admin routes on a loopback admin listener guarded by a token; listen, and
 * close. A service is then only its schemas, its synchronous `apply` functions and its route callbacks.
 */
import type http from 'node:http';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { KEY_SET_ENV, keySetFromEnv, type CapabilityKeySet } from '../src/capability/capability-keys';
import { SqliteJtiRegistry } from '../src/capability/capability-replay';
import { startAdminListener, ServiceConfigError, type AdminConfig, type AdminListener } from './admin-listener';
import { FaultInjector } from './faults';
import { DownstreamErrorCode } from '../src/downstream/protocol';
import { CAPABILITY_HEADER } from '../src/capability/capability';
import { closeServer, createHttpServer, HttpError, json, listen, Router, type RequestContext } from './http-kit';
import { READ_TENANT_PARAM, readsOneTenant, verifyReadCapability } from './read-capability';
import { IdempotencyStore } from './idempotency-store';
import { mutationHandler, type Mutation, type ServiceRuntime } from './idempotent-route';
import { registerStandardAdminRoutes, registerStandardRoutes } from './standard-routes';

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
   * path to one). Every mutating, lookup and seal request must carry a capability for exactly this service, its
   * key, arguments, tenant and scope (else 403); used token ids are kept in the service's database. Without keys
   * the service refuses to start (`Service.KeysMissing`) unless `insecureDev`.
   */
  readonly capabilityKeys?: CapabilityKeySet;
  /** Run without a verification key, accepting every request (`--insecure-dev`). Default false: fail closed. */
  readonly insecureDev?: boolean;
  /**
   * The admin listener (seeding, evidence, and with `lab` fault injection) on 127.0.0.1, guarded by a bearer
   * token. Default none: a production start serves no admin route and has no fault injector.
   */
  readonly admin?: AdminConfig;
}

/** What makes one service: its name, its tables and its business routes. */
export interface ServiceDefinition {
  /** The name in the ready line and `GET /v1/contract`, e.g. `inventory`. */
  readonly name: string;
  /** Creates the service's own tables (idempotent: `CREATE TABLE IF NOT EXISTS`). */
  migrate(db: Database): void;
  /**
   * The idempotent mutating routes, by path (`POST`): each gets the whole contract (key, arguments hash, fence,
   * capability, intent time, the retained outcome) from `mutationHandler`.
   */
  readonly mutations?: Readonly<Record<string, Mutation>>;
  /**
   * Reads of one record by path parameters (`GET`): the value as JSON, or 404 with `notFound` when absent. Each
   * pattern names its tenant (`:tenant`); the public listener answers only with a read capability for exactly that
   * path and tenant (services/read-capability.ts), the admin listener (when enabled) at `/admin<pattern>`.
   */
  readonly reads?: Readonly<Record<string, ReadRoute>>;
  /** Registers any other business routes on top of the standard ones (public listener). */
  routes?(router: Router, runtime: ServiceRuntime): void;
  /** Registers the service's admin routes (seeding, evidence; fault routes only when `runtime.faults` exists). */
  adminRoutes?(router: Router, runtime: ServiceRuntime): void;
}

/** A read of one record by the route's path parameters (missing parameters read as ''). */
export interface ReadRoute {
  get(db: Database, params: Readonly<Record<string, string | undefined>>): unknown;
  /** The 404 message when `get` finds nothing. */
  readonly notFound: string;
}

/** A running service. */
export interface RunningService {
  readonly url: string;
  readonly port: number;
  readonly runtime: ServiceRuntime;
  /** The admin listener's URL (always 127.0.0.1), when enabled. */
  readonly adminUrl?: string;
  /** The admin socket's bound address as the OS reports it, when enabled. */
  readonly adminBoundAddress?: string;
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

/** What `mountService` needs: an open database and how capabilities are verified. */
export interface MountOptions {
  /** The service's database (`openServiceDatabase`); the caller owns it and closes it. */
  readonly db: Database;
  /** As `ServiceHostOptions.capabilityKeys`: required unless `insecureDev`. */
  readonly capabilityKeys?: CapabilityKeySet;
  readonly insecureDev?: boolean;
  readonly retentionMs?: number;
  /** Build the admin router too (seeding, evidence); with `lab`, a fault injector. Default false. */
  readonly admin?: boolean;
  readonly lab?: boolean;
}

/**
 * A service mounted on routers: serve `handle` from your own `http.Server`, or `fetch` from your own Hono app or
 * `@hono/node-server` (and `adminRouter` on loopback only).
 */
export interface MountedService {
  readonly runtime: ServiceRuntime;
  readonly router: Router;
  readonly adminRouter?: Router;
  /** The public listener's request handler: `http.createServer((req, res) => void mounted.handle(req, res))`. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  /** The public listener's fetch handler (`serve({ fetch: mounted.fetch })`). */
  readonly fetch: Router['fetch'];
}

/** Refuses (`Service.KeysMissing`) to build a service that would verify nothing, unless `insecureDev`. */
function requireKeys(name: string, keys: CapabilityKeySet | undefined, insecureDev: boolean | undefined): void {
  if (keys === undefined && insecureDev !== true) {
    throw new ServiceConfigError(
      'Service.KeysMissing',
      `${name} has no capability verification keys (${KEY_SET_ENV}); refusing to start (pass --insecure-dev to run unverified on a development machine)`,
    );
  }
}

/**
 * Migrates `db`, builds the idempotency runtime (releasing orphaned in-progress keys) and registers the standard
 * routes, the service's mutations and reads and its own routes on a router, without listening: what
 * `startService` runs, for a user's own HTTP server. Fail closed as `startService`.
 */
export function mountService(definition: ServiceDefinition, options: MountOptions): MountedService {
  requireKeys(definition.name, options.capabilityKeys, options.insecureDev);
  const { db } = options;
  definition.migrate(db);
  const store = new IdempotencyStore({
    db,
    ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
  });
  // A record still in progress at start belongs to a process that died before its commit: no effect exists.
  store.recoverOrphans();
  // A token is accepted once, across restarts: the used ids live in this service's database.
  const capabilityKeys = options.capabilityKeys?.withReplay(new SqliteJtiRegistry(db));
  const runtime: ServiceRuntime = {
    db,
    store,
    serviceName: definition.name,
    // The fault injector exists only in a lab start: nothing else can arm a fault.
    ...(options.admin === true && options.lab === true ? { faults: new FaultInjector() } : {}),
    ...(capabilityKeys === undefined ? {} : { capabilityKeys }),
  };
  const limits = runtime.bodyLimitBytes === undefined ? {} : { bodyLimitBytes: runtime.bodyLimitBytes };
  const router = registerStandardRoutes(new Router(limits), definition.name, runtime);
  for (const [path, spec] of Object.entries(definition.mutations ?? {}))
    router.on('POST', path, mutationHandler(runtime, spec));
  const reads = Object.entries(definition.reads ?? {});
  for (const [path, read] of reads) {
    if (!readsOneTenant(path))
      throw new ServiceConfigError(
        'Service.ReadUnscoped',
        `${definition.name}: read route ${path} names no :${READ_TENANT_PARAM}; every read is of one tenant's record`,
      );
    router.on('GET', path, (c) => {
      authorizeRead(definition.name, runtime, c);
      return answerRead(db, read, c);
    });
  }
  definition.routes?.(router, runtime);
  let adminRouter: Router | undefined;
  if (options.admin === true) {
    adminRouter = registerStandardAdminRoutes(new Router(limits), runtime);
    // An operator's reads: the same records on the loopback admin listener, behind its token.
    for (const [path, read] of reads) adminRouter.on('GET', `/admin${path}`, (c) => answerRead(db, read, c));
    definition.adminRoutes?.(adminRouter, runtime);
  }
  return {
    runtime,
    router,
    ...(adminRouter === undefined ? {} : { adminRouter }),
    handle: router.handle,
    fetch: router.fetch,
  };
}

function answerRead(db: Database, read: ReadRoute, c: RequestContext): Response {
  const value = read.get(db, c.req.param());
  if (value === undefined) throw new HttpError(404, DownstreamErrorCode.NotFound, read.notFound);
  return json(200, value);
}

/** A public read needs a read capability for exactly its path and tenant (403 `Capability.Invalid`, counted). */
function authorizeRead(service: string, runtime: ServiceRuntime, c: RequestContext): void {
  if (runtime.capabilityKeys === undefined) return; // --insecure-dev only
  try {
    verifyReadCapability(c.req.header(CAPABILITY_HEADER), runtime.capabilityKeys, {
      service,
      path: c.req.path,
      tenant: c.req.param(READ_TENANT_PARAM) ?? '',
    });
  } catch (err) {
    runtime.store.countRefusal(DownstreamErrorCode.CapabilityInvalid, 'lookup');
    throw new HttpError(403, DownstreamErrorCode.CapabilityInvalid, err instanceof Error ? err.message : String(err));
  }
}

/** Opens the database, migrates, registers the routes and starts listening. */
export async function startService(
  definition: ServiceDefinition,
  options: ServiceHostOptions,
): Promise<RunningService> {
  // Fail closed: without its verification keys a service would accept every request.
  const keys = options.capabilityKeys ?? keySetFromEnv();
  requireKeys(definition.name, keys, options.insecureDev);
  const db = openServiceDatabase(options.dbPath);
  let mounted: MountedService;
  try {
    mounted = mountService(definition, {
      db,
      ...(keys === undefined ? {} : { capabilityKeys: keys }),
      ...(options.insecureDev === undefined ? {} : { insecureDev: options.insecureDev }),
      ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
      admin: options.admin !== undefined,
      lab: options.admin?.lab === true,
    });
  } catch (err) {
    db.close();
    throw err;
  }
  const { runtime, router, adminRouter } = mounted;
  const server = createHttpServer(router.fetch);
  const host = options.host ?? '127.0.0.1';
  let port: number;
  let admin: AdminListener | undefined;
  try {
    port = await listen(server, options.port ?? 0, host);
    if (adminRouter !== undefined && options.admin !== undefined) {
      admin = await startAdminListener(adminRouter, options.admin);
    }
  } catch (err) {
    await closeServer(server);
    db.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    runtime,
    ...(admin === undefined ? {} : { adminUrl: admin.url, adminBoundAddress: admin.boundAddress }),
    close: () => {
      closing ??= Promise.all([closeServer(server), admin?.close()]).then(() => {
        db.close();
      });
      return closing;
    },
  };
}
