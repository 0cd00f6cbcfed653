/**
 * The one stack builder of the lab: the demo, the fault lab, the bench and the integration tests all start their
 * processes here. A stack is a Temporal server (a dev server of its own, TEMPORAL_ADDRESS, or one the caller
 * starts) with a client on it, the workflow bundle(s) worker processes load, this stack's keys (fresh Ed25519
 * capability keys and a development identity issuer) and the downstream service processes, each on its own SQLite
 * database. The pieces are exported too: the fault lab starts fresh services per case (`startServices`) and a
 * server of a case's own (`linkServer`).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv } from '../src/codec/data-converter';
import type { AdminClient } from '../services/admin-client';
import { IDENTITY_ISSUERS_ENV } from '../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../src/identity/issue';
import { tracingFromEnv, type Tracing } from '../src/observability/tracing';
import { QUOTA_DB_ENV } from '../src/stores/quota-store';
import {
  generateCapabilityTrust,
  type CapabilitySigningKey,
  type CapabilityTrust,
} from '../src/capability/capability-keys';
import { connectClient, serverTarget } from '../host/server/connection-config';
import {
  connectOrStart,
  startDevServer,
  type DevServer,
  type DevServerOptions,
  type ServerHandle,
} from '../host/server/dev-server';
import { writeWorkflowBundle, type BundleOptions } from '../host/worker/bundle';
import { DATA_DIR } from '../host/server/temporal-binaries';
import { cachedBundle } from './bundle-cache';
import { LAB_STRATEGY_WORKFLOW_MODULE } from './strategies';
import { spawnedClient, spawnService, spawnServiceEntry, type SpawnedService } from '../services/spawn';

/** The business services a stack can run. */
export type BusinessService = 'wallet' | 'inventory' | 'shipping' | 'orders' | 'notifications';

/** What a stack needs of its Temporal server: where it is, and how to stop it (a no-op for one it did not start). */
export interface StackServer {
  readonly address: string;
  readonly namespace: string;
  /** Named by TEMPORAL_ADDRESS (its credentials come from the environment); else a local server, none sent. */
  readonly external?: boolean;
  stop(): Promise<void>;
}

/** A Temporal server with a client on it. */
export interface ServerLink<S extends StackServer = ServerHandle> {
  readonly server: S;
  readonly connection: Connection;
  readonly client: Client;
}

/** The client's payload codecs and tracing (each undefined: off). */
export interface ClientOptions {
  readonly dataConverter?: DataConverter;
  readonly tracing?: Tracing;
}

/** Connects a client to `server`. */
export async function linkServer<S extends StackServer>(server: S, opts: ClientOptions = {}): Promise<ServerLink<S>> {
  const { connection } = await connectClient(serverTarget(server));
  const client = new Client({
    connection,
    namespace: server.namespace,
    ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}),
    ...(opts.tracing ? { plugins: [opts.tracing.plugin] } : {}),
  });
  return { server, connection, client };
}

/** Starts a dev server of the caller's own and connects a client to it; the server is stopped if the client fails. */
export async function startLinkedServer(
  serverOptions: DevServerOptions,
  opts: ClientOptions = {},
): Promise<ServerLink<DevServer>> {
  const server = await startDevServer(serverOptions);
  try {
    return await linkServer(server, opts);
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** A stack's keys: who may sign capabilities and mint identity tokens, and what its workers are given of them. */
export interface StackKeys {
  /** The dispatch and relay signing keys, the services' public key set, and the env of each. */
  readonly capabilityTrust: CapabilityTrust;
  /** The dispatch side's Ed25519 key capabilities are signed with; the services verify with its public key. */
  readonly capabilityKey: CapabilitySigningKey;
  /** The development identity issuer: workers get only its public key set; callers mint tokens with `issue`. */
  readonly identity: DevIssuer;
  /**
   * Environment a worker process of this stack needs: the capability signing key, the identity issuer's public
   * keys (LEDGERLOOP_IDENTITY_ISSUERS).
   */
  readonly workerEnv: Readonly<Record<string, string>>;
}

/** Fresh keys (or `capabilityTrust` when given), the issuer's files in `identityDir` (or the `issuer` given). */
export async function createStackKeys(
  identityDir: string,
  capabilityTrust?: CapabilityTrust,
  issuer?: DevIssuer,
): Promise<StackKeys> {
  const trust = capabilityTrust ?? generateCapabilityTrust();
  const identity = issuer ?? (await createDevIssuer(identityDir));
  return {
    capabilityTrust: trust,
    capabilityKey: trust.dispatch,
    identity,
    workerEnv: { ...trust.workerEnv, [IDENTITY_ISSUERS_ENV]: identity.configPath },
  };
}

/** One running service process with a client that signs its lookups with the stack's dispatch key. */
export interface StackService<N extends string = BusinessService> {
  readonly name: N;
  readonly proc: SpawnedService;
  readonly client: AdminClient;
  readonly dbPath: string;
}

/** Running service processes. */
export interface StackServices<N extends string = BusinessService> {
  readonly byName: ReadonlyMap<N, StackService<N>>;
  /** Base URL per service name: what a worker needs. */
  readonly urls: Readonly<Record<string, string>>;
  stop(): Promise<void>;
  /**
   * Stops `name`'s process (or finds it dead) and starts it again on the same port and database: a downstream
   * restart. `byName` then holds the new process and its client.
   */
  restart(name: N): Promise<StackService<N>>;
}

export interface StartServicesOptions<N extends string> {
  /** The services get the public key set; their clients sign lookups with the dispatch key. */
  readonly capabilityTrust: CapabilityTrust;
  /** The database file of each service. */
  readonly dbPath: (name: N) => string;
  /** Ports, in the order of the names (0 or missing: a free one). */
  readonly ports?: readonly number[];
  /** Idempotency-key retention per service; default the service's. */
  readonly retentionMs?: Partial<Record<N, number>>;
  /** The clients' request timeout; default the client's. */
  readonly clientTimeoutMs?: number;
  /**
   * The process entry of a service that is not one of the package's own (a project's service, which calls
   * `runServiceMain`); without one, `name` must be a business service of the package.
   */
  readonly entry?: (name: N) => string | undefined;
}

/** Spawns `names`, each its own process and database, all at once; when one fails, the others are stopped. */
export async function startServices<N extends string>(
  names: readonly N[],
  opts: StartServicesOptions<N>,
): Promise<StackServices<N>> {
  const env = { ...opts.capabilityTrust.serviceEnv };
  const spawnOne = async (name: N, port: number | undefined): Promise<StackService<N>> => {
    const dbPath = opts.dbPath(name);
    const retentionMs = opts.retentionMs?.[name];
    const options = {
      dbPath,
      env,
      ...(port !== undefined ? { port } : {}),
      ...(retentionMs !== undefined ? { retentionMs } : {}),
    };
    const entry = opts.entry?.(name);
    const proc =
      entry !== undefined
        ? await spawnServiceEntry(name, entry, options)
        : await spawnService(name as BusinessService, options);
    const client = spawnedClient(proc, {
      capabilityKey: opts.capabilityTrust.dispatch,
      ...(opts.clientTimeoutMs !== undefined ? { timeoutMs: opts.clientTimeoutMs } : {}),
      signs: 'lookups',
    });
    return { name, proc, client, dbPath };
  };
  const settled = await Promise.allSettled(names.map((name, i) => spawnOne(name, opts.ports?.[i])));
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const byName = new Map(started.map((s) => [s.name, s] as const));
  const stop = async (): Promise<void> => {
    await Promise.all([...byName.values()].map((s) => s.proc.stop()));
  };
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    byName,
    urls: Object.fromEntries(started.map((s) => [s.name, s.proc.url])),
    stop,
    async restart(name) {
      const old = byName.get(name);
      if (old === undefined) throw new Error(`no service ${name} runs here`);
      await old.proc.stop();
      const again = await spawnOne(name, Number(new URL(old.proc.url).port));
      byName.set(name, again);
      return again;
    },
  };
}

/** A workflow bundle to build: where (a file name in the stack's data directory) and with which options. */
export interface BundleSpec extends BundleOptions {
  readonly file: string;
}

export interface StackOptions<S extends StackServer = ServerHandle> {
  /** Where SQLite files, keys and bundles go; default `<repo>/.data/<name>`. */
  readonly dataDir?: string;
  readonly name?: string;
  /** The dev server's options (when this stack starts one). */
  readonly server?: DevServerOptions;
  /** Start a dev server of its own even when TEMPORAL_ADDRESS is set (e.g. to have a Web UI). Default false. */
  readonly ownServer?: boolean;
  /** Starts the server instead (e.g. the bench's dev server with its dynamic config, or the local cluster). */
  readonly startServer?: () => Promise<S>;
  /** Run a wallet (the default), reachable as `Stack.wallet`; false: only `services`. */
  readonly wallet?: boolean;
  /** More services, each its own process and database. */
  readonly services?: readonly BusinessService[];
  readonly walletRetentionMs?: number;
  /** The database file name of a service in `dataDir`; default `<name>-<start time>.db`. */
  readonly dbFile?: (name: BusinessService) => string;
  /** The service clients' request timeout; default the client's. */
  readonly clientTimeoutMs?: number;
  /** Payload codecs for the client; default from LEDGERLOOP_CODEC_KEYS; null: plain payloads whatever the env says. */
  readonly dataConverter?: DataConverter | null;
  /** Tracing for the client and the bundle; default from LEDGERLOOP_TRACING; null: none whatever the env says. */
  readonly tracing?: Tracing | null;
  /** The capability keys; default fresh Ed25519 keys for this stack (dispatch and relay). */
  readonly capabilityTrust?: CapabilityTrust;
  /** The identity issuer's directory; default `identity-<start time>` in `dataDir`. */
  readonly identityDir?: string;
  /** An issuer to use instead of a fresh one (the local cluster's: its frontend accepts that issuer's tokens). */
  readonly identity?: DevIssuer;
  /**
   * The workflow bundle: built into `dataDir` (default `workflow-bundle.js`, with the tracing interceptors when
   * tracing is on), or `{ prebuilt }`, a bundle the caller already wrote.
   */
  readonly bundle?: BundleSpec | { readonly prebuilt: string };
  /** More bundles to build, by name, after the first (one at a time: webpack runs on this thread either way). */
  readonly moreBundles?: Readonly<Record<string, BundleSpec>>;
  /** A folder of bundles keyed by their options and sources (lab/bundle-cache.ts): reuse one built before. */
  readonly bundleCache?: string;
}

/** A running stack without a wallet of its own (`wallet: false`). */
export interface StackBase<S extends StackServer = ServerHandle> extends ServerLink<S>, StackKeys {
  readonly dataDir: string;
  readonly bundlePath: string;
  /** The bundles of `moreBundles`, by name. */
  readonly moreBundles: Readonly<Record<string, string>>;
  /** The client's payload codecs; workers of this stack must use the same (undefined: plain payloads). */
  readonly dataConverter?: DataConverter;
  /** The client's tracing, when on; the bundle then carries the workflow interceptors. */
  readonly tracing?: Tracing;
  /** Every business service of the stack. */
  readonly services: Readonly<
    Partial<Record<BusinessService, { readonly proc: SpawnedService; readonly client: AdminClient }>>
  >;
  /** Base URL per service name: what a worker of this stack needs. */
  readonly serviceUrls: Readonly<Record<string, string>>;
  /**
   * The SQLite file of the stack's cross-run rate-limit windows (src/stores/quota-store.ts), shared by every worker
   * of the stack: `workerEnv` names it (LEDGERLOOP_QUOTA_DB), in-process workers open it themselves.
   */
  readonly quotaDb: string;
  /** Milliseconds from the start until the bundles were written and until the services were ready. */
  readonly setupMs: { readonly bundles: number; readonly services: number };
  /** Stops the services, then the server; the client closes a little later (`closeClientLater`). */
  stop(): Promise<void>;
}

/**
 * The client's connection closes a while after the stack stops, not at once. The client retries a call the server
 * answered UNAVAILABLE (a GOAWAY under load, "excess pings") after a short backoff, from a timer; a retry that fires
 * after close() throws "Channel has been shut down" outside any caller, which failed whole test files in CI. The
 * timer does not keep the process alive.
 */
const CLIENT_CLOSE_GRACE_MS = 30_000;
function closeClientLater(connection: Connection): void {
  setTimeout(() => void connection.close().catch(() => undefined), CLIENT_CLOSE_GRACE_MS).unref();
}

/** A running stack with its wallet. */
export interface Stack<S extends StackServer = ServerHandle> extends StackBase<S> {
  readonly wallet: SpawnedService;
  readonly walletClient: AdminClient;
}

export function startStack<S extends StackServer = ServerHandle>(
  opts: StackOptions<S> & { readonly wallet: false },
): Promise<StackBase<S>>;
export function startStack<S extends StackServer = ServerHandle>(opts?: StackOptions<S>): Promise<Stack<S>>;
/** Starts the server, builds the bundles and spawns the services at once; on any failure stops what started. */
export async function startStack<S extends StackServer = ServerHandle>(
  opts: StackOptions<S> = {},
): Promise<StackBase<S> | Stack<S>> {
  const dataDir = opts.dataDir ?? path.join(DATA_DIR, opts.name ?? 'stack');
  mkdirSync(dataDir, { recursive: true });
  const stamp = Date.now();
  const dataConverter = opts.dataConverter === null ? undefined : (opts.dataConverter ?? dataConverterFromEnv());
  const tracing = opts.tracing === null ? undefined : (opts.tracing ?? tracingFromEnv('ledgerloop-client'));
  const keys = await createStackKeys(
    opts.identityDir ?? path.join(dataDir, `identity-${stamp}`),
    opts.capabilityTrust,
    opts.identity,
  );
  const names = [
    ...(opts.wallet === false ? [] : ['wallet' as const]),
    ...(opts.services ?? []).filter((s) => s !== 'wallet'),
  ];
  const dbFile = opts.dbFile ?? ((name: BusinessService) => `${name}-${stamp}.db`);
  const t0 = Date.now();
  const setupMs = { bundles: 0, services: 0 };
  const [server, bundles, services] = await Promise.allSettled([
    opts.startServer
      ? opts.startServer()
      : // Without `startServer`, S is the default ServerHandle.
        ((opts.ownServer
          ? startDevServer(opts.server ?? {})
          : connectOrStart(opts.server ?? {})) as Promise<unknown> as Promise<S>),
    buildBundles(dataDir, opts, tracing !== undefined).then((b) => {
      setupMs.bundles = Date.now() - t0;
      return b;
    }),
    startServices(names, {
      capabilityTrust: keys.capabilityTrust,
      dbPath: (name) => path.join(dataDir, dbFile(name)),
      ...(opts.walletRetentionMs !== undefined ? { retentionMs: { wallet: opts.walletRetentionMs } } : {}),
      ...(opts.clientTimeoutMs !== undefined ? { clientTimeoutMs: opts.clientTimeoutMs } : {}),
    }).then((s) => {
      setupMs.services = Date.now() - t0;
      return s;
    }),
  ]);
  const stopStarted = async (): Promise<void> => {
    if (services.status === 'fulfilled') await services.value.stop();
    if (server.status === 'fulfilled') await server.value.stop();
  };
  if (server.status === 'rejected' || bundles.status === 'rejected' || services.status === 'rejected') {
    await stopStarted();
    throw [server, bundles, services].find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
  }
  let link: ServerLink<S>;
  try {
    link = await linkServer(server.value, {
      ...(dataConverter ? { dataConverter } : {}),
      ...(tracing ? { tracing } : {}),
    });
  } catch (err) {
    await stopStarted();
    throw err;
  }
  const running = services.value;
  const quotaDb = path.join(dataDir, `quota-${stamp}.db`);
  const base: StackBase<S> = {
    ...link,
    ...keys,
    // The stack's workers count cross-run rate limits in one file (a cluster host given a PostgreSQL URL uses that).
    workerEnv: { ...keys.workerEnv, [QUOTA_DB_ENV]: quotaDb },
    quotaDb,
    dataDir,
    ...bundles.value,
    services: Object.fromEntries([...running.byName].map(([name, s]) => [name, { proc: s.proc, client: s.client }])),
    serviceUrls: running.urls,
    setupMs,
    ...(dataConverter ? { dataConverter } : {}),
    ...(tracing ? { tracing } : {}),
    async stop() {
      closeClientLater(link.connection);
      await running.stop();
      await link.server.stop();
    },
  };
  const wallet = running.byName.get('wallet');
  return wallet === undefined || opts.wallet === false
    ? base
    : { ...base, wallet: wallet.proc, walletClient: wallet.client };
}

/** Writes the stack's bundle (unless prebuilt) and then `moreBundles`, one after the other. */
async function buildBundles(
  dataDir: string,
  opts: Pick<StackOptions<StackServer>, 'bundle' | 'moreBundles' | 'bundleCache'>,
  tracing: boolean,
): Promise<{ bundlePath: string; moreBundles: Record<string, string> }> {
  const write = ({ file, ...options }: BundleSpec): Promise<string> =>
    opts.bundleCache
      ? cachedBundle(opts.bundleCache, options, (to) => writeWorkflowBundle(to, options))
      : writeWorkflowBundle(path.join(dataDir, file), options);
  // The stack's own bundle carries the lab's naive loop (lab/strategies/): the demo and the tests run it on purpose.
  const first = opts.bundle ?? {
    file: 'workflow-bundle.js',
    tracing,
    interceptorModules: [LAB_STRATEGY_WORKFLOW_MODULE],
  };
  const bundlePath = 'prebuilt' in first ? first.prebuilt : await write(first);
  const moreBundles: Record<string, string> = {};
  for (const [name, spec] of Object.entries(opts.moreBundles ?? {})) moreBundles[name] = await write(spec);
  return { bundlePath, moreBundles };
}
