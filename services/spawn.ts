/**
 * Starts a downstream service (or the orders relay) as a real child process
 * (`node -r bin/register.cjs services/<name>/main.ts ...`) and waits for its one-line JSON ready message.
 *
 * This is test, demo and lab plumbing: by default it enables the admin listener on a free loopback port with a
 * fresh random admin token (passed in the environment, never on the command line) and `--lab` (fault injection),
 * and returns `adminUrl` / `adminToken`. The verification keys come from `env` (LEDGERLOOP_CAPABILITY_KEYS); a
 * service started without them refuses to start unless `extraArgs` has `--insecure-dev`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { AdminClient, type CapabilitySigner } from './admin-client';
import type { CapabilitySigningKey } from '../src/capability/capability-keys';
import { COMPILED, packageModule, SOURCE_ROOT, TS_LOADER } from '../src/package-paths';
import { devCapabilitySigner } from './dev-signer';

/**
 * Processes that can be spawned: the downstream services (each `services/<name>/main.ts`) and the orders
 * outbox relay (`services/orders/relay-main.ts`, flags `--target URL [--poll-ms N]` via `extraArgs`).
 * Add a service here and in `SERVICE_ENTRIES`.
 */
export type ServiceName = 'wallet' | 'inventory' | 'shipping' | 'orders' | 'notifications' | 'orders-relay';

/** The entry file of each spawnable process, relative to `services`. */
export const SERVICE_ENTRIES: Readonly<Record<ServiceName, string>> = {
  wallet: 'wallet/main',
  inventory: 'inventory/main',
  shipping: 'shipping/main',
  orders: 'orders/main',
  notifications: 'notifications/main',
  'orders-relay': 'orders/relay-main',
};

/** Options of `spawnService`. */
export interface SpawnServiceOptions {
  /** SQLite database file of the service. */
  readonly dbPath: string;
  /** TCP port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Idempotency-key retention in milliseconds; default the service's (24 h). */
  readonly retentionMs?: number;
  /** Extra environment variables (merged over this process's environment). */
  readonly env?: Readonly<Record<string, string>>;
  /** Further command-line arguments of the process, e.g. `['--target', url]` for the relay. */
  readonly extraArgs?: readonly string[];
  /** How long to wait for the ready line; default 20 s. */
  readonly readyTimeoutMs?: number;
  /** Enable the admin listener (127.0.0.1, random port, a fresh token). Default true. */
  readonly admin?: boolean;
  /** With the admin listener: `--lab` (the fault injector and fault routes). Default true. */
  readonly lab?: boolean;
}

/** A running service process. */
export interface SpawnedService {
  /** The package's service name, or a project's (`spawnServiceEntry`). */
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The admin listener (127.0.0.1), unless started with `admin: false`. */
  readonly adminUrl?: string;
  /** The bearer token of the admin listener. */
  readonly adminToken?: string;
  /** The admin socket's bound address as the process reported it. */
  readonly adminBoundAddress?: string;
  /** Sends SIGTERM and resolves when the process exited (SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

/** The folder of the package's modules (the repository root, or `dist/` installed), not the working directory. */
export const REPO_ROOT = SOURCE_ROOT;

/**
 * The package's TypeScript loader (`node -r <this> entry.ts`): every process Ledgerloop spawns from its sources
 * starts through it; installed, the compiled entries run as they are (`nodeArgsFor`).
 */
export { TS_LOADER };

const STOP_GRACE_MS = 5_000;
const STDERR_TAIL_CHARS = 8_000;

/** Children still running; killed if this process exits without stopping them, so none is orphaned. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/** Spawns service `name` and resolves once it printed its ready line; rejects (with its stderr) otherwise. */
export function spawnService(name: ServiceName, opts: SpawnServiceOptions): Promise<SpawnedService> {
  return spawnServiceEntry(name, packageModule('services', ...SERVICE_ENTRIES[name].split('/')), opts);
}

/**
 * Spawns the service process whose entry is `entry` (it calls `runServiceMain(name, ...)`: a project's own
 * service) and resolves once it printed its ready line naming `name`.
 */
export function spawnServiceEntry(name: string, entry: string, opts: SpawnServiceOptions): Promise<SpawnedService> {
  const adminToken = opts.admin === false ? undefined : randomBytes(32).toString('base64url');
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  delete env['LEDGERLOOP_ADMIN_PORT'];
  if (adminToken !== undefined) env['LEDGERLOOP_ADMIN_TOKEN'] = adminToken;
  else delete env['LEDGERLOOP_ADMIN_TOKEN'];
  const child = spawn(process.execPath, serviceArgs(entry, opts, adminToken !== undefined), {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const stop = stopperOf(child);
  const failure = (why: string) => new Error(`${name} service did not start: ${why}\n--- stderr ---\n${stderr}`);
  return readyLineOf(child, name, opts.readyTimeoutMs ?? 20_000).then(
    (ready) => ({
      name,
      url: ready.url,
      pid: ready.pid,
      child,
      stop,
      ...(ready.adminUrl === undefined ? {} : { adminUrl: ready.adminUrl }),
      ...(ready.adminBoundAddress === undefined ? {} : { adminBoundAddress: ready.adminBoundAddress }),
      ...(adminToken === undefined ? {} : { adminToken }),
    }),
    (why: string) => stop().then(() => Promise.reject(failure(why))),
  );
}

/** The service process's arguments: its entry (through the package's loader from the sources), store and ports. */
function serviceArgs(entry: string, opts: SpawnServiceOptions, admin: boolean): string[] {
  // From the sources, any entry (a project's `.js` one included) goes through the package's loader: the package
  // it requires is TypeScript here. From dist, the entry runs as it is.
  const args = [...(COMPILED ? [entry] : ['-r', TS_LOADER, entry]), '--db', opts.dbPath];
  args.push('--port', String(opts.port ?? 0));
  if (opts.retentionMs !== undefined) args.push('--retention-ms', String(opts.retentionMs));
  if (admin) args.push('--admin-port', '0', ...(opts.lab === false ? [] : ['--lab']));
  return [...args, ...(opts.extraArgs ?? [])];
}

/** Stops `child`: SIGTERM, SIGKILL after the grace period, resolved once it exited. Safe to call twice. */
function stopperOf(child: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
    })());
}

/**
 * The ready line the child prints first on stdout, naming `name`; rejects with why not (a spawn error, an early
 * exit, another first line, or none within `timeoutMs`). Stdout keeps draining after, so the child never blocks.
 */
function readyLineOf(child: ChildProcess, name: string, timeoutMs: number): Promise<ReadyLine> {
  return new Promise<ReadyLine>((resolve, reject) => {
    let stdout = '';
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      return true;
    };
    const fail = (why: string): void => {
      if (settle()) reject(why);
    };
    const timer = setTimeout(() => fail(`no ready line within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (err) => fail(`spawn failed: ${err.message}`));
    child.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      if (settled) return; // keep draining so the child never blocks on a full pipe
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      const ready = parseReadyLine(stdout.slice(0, newline), name);
      if (ready === undefined) return fail(`unexpected first stdout line: ${stdout.slice(0, newline)}`);
      if (settle()) resolve(ready);
    });
  });
}

interface ReadyLine {
  readonly url: string;
  readonly pid: number;
  readonly adminUrl?: string;
  readonly adminBoundAddress?: string;
}

function parseReadyLine(line: string, name: string): ReadyLine | undefined {
  try {
    const msg = JSON.parse(line) as Record<string, unknown>;
    if (msg['service'] === name && typeof msg['url'] === 'string' && typeof msg['pid'] === 'number') {
      const adminUrl = msg['adminUrl'];
      const bound = msg['adminBoundAddress'];
      return {
        url: msg['url'],
        pid: msg['pid'],
        ...(typeof adminUrl === 'string' ? { adminUrl } : {}),
        ...(typeof bound === 'string' ? { adminBoundAddress: bound } : {}),
      };
    }
  } catch {
    // not JSON: fall through
  }
  return undefined;
}

/**
 * A client of a spawned service for plumbing (tests, demo, lab, bench): its admin listener with the token, and,
 * given a signing key the service trusts (the stack's dispatch key), a signer for its own requests (see
 * `devCapabilitySigner`).
 */
export function spawnedClient(
  proc: SpawnedService,
  opts: {
    readonly capabilityKey?: CapabilitySigningKey;
    readonly timeoutMs?: number;
    /** What the signer signs: `all` requests given no capability (service tests), or only `lookups` and reads (stacks, whose mutations go through the dispatch path). Default `all`. */
    readonly signs?: 'all' | 'lookups';
  } = {},
): AdminClient {
  const key = opts.capabilityKey;
  const sign = key === undefined ? undefined : devCapabilitySigner(key, proc.name);
  const signer: CapabilitySigner | undefined =
    sign === undefined || opts.signs !== 'lookups' ? sign : (req) => (req.kind === 'mutation' ? undefined : sign(req));
  return new AdminClient({
    baseUrl: proc.url,
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    ...(proc.adminUrl !== undefined && proc.adminToken !== undefined
      ? { admin: { baseUrl: proc.adminUrl, token: proc.adminToken } }
      : {}),
    ...(signer === undefined ? {} : { signer }),
  });
}
