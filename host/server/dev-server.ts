/**
 * Starts and stops a real Temporal dev server (`temporal server start-dev`, SQLite persistence, Web UI) from
 * the pinned CLI, with the project's search attributes registered. Nothing is downloaded here: the CLI is
 * `TEMPORAL_CLI`, `temporal` on PATH, or the pinned one `ledgerloop setup` put in the per-user cache
 * (temporal-binaries.ts).
 *
 * The server runs in its own process group with its output in `<repo>/.data/temporal-<port>.log`. It never
 * outlives the Node process that started it: a watchdog SIGTERMs it when that process goes away.
 *
 * Why not the SDK's dev server (`TestWorkflowEnvironment.createLocal` with an `existing-path` executable, read in
 * sdk-core 1.24's `ephemeral_server`)? It builds the same `start-dev` flags and picks a port, and that is all it
 * shares with this file; what this file does and it does not:
 *   - a start deadline of our choosing (default 60 s): the SDK tries to connect 50 times 100 ms apart and then
 *     kills the server, 5 s hard-coded, which a loaded 2-core machine can miss;
 *   - ready means every project search attribute is listed, not only that the frontend connects (a run started
 *     earlier would fail its first upsert);
 *   - a graceful stop: SIGTERM to the process group, SIGKILL after 10 s; the SDK's teardown only SIGKILLs, which
 *     a SQLite file that a restart reuses should not see;
 *   - `kill(signal)`, `pid`, `exited` and `restart()` on the same port and database (the fault lab crashes the
 *     server this way); the SDK offers teardown only;
 *   - the server's output in a log file whose tail a failed start reports; the SDK forwards it into this process's
 *     own stdout and stderr (the test log). With no output pipe to break when this process dies, the watchdog
 *     stops the server then, even on SIGKILL;
 *   - a new port pair when the one picked was taken before the server bound it;
 *   - a server given by `TEMPORAL_ADDRESS` (`connectOrStart`, `ensureSearchAttributes`).
 * Measured side by side (`node -r tsx/cjs lab/bench/dev-server-startup.ts`, both with a SQLite file), this file's
 * start and the SDK's take about as long: the file's schema set-up, about half a second here, is most of either.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { connectClient } from './connection-config';
import {
  SEARCH_ATTRIBUTES,
  type SearchAttributeDef,
  type SearchAttributeTypeName,
} from '../../src/domain/search-attributes';
import { dynamicConfigFlags } from './message-limits';
import { DATA_DIR, resolveTemporalCli } from './temporal-binaries';

export interface DevServerOptions {
  /** gRPC port; 0 or undefined picks a free one. */
  port?: number;
  /** Web UI port; 0 or undefined picks a free one. Ignored when headless. */
  uiPort?: number;
  /** SQLite file; default `<repo>/.data/temporal-<port>.db`. Reusing a file keeps the workflows it holds. */
  dbFile?: string;
  /** Delete the db file (and its -wal/-shm) after stop(). Default false. */
  ephemeral?: boolean;
  /** No Web UI. */
  headless?: boolean;
  /** Namespace the caller will use; `default` always exists and is created too. */
  namespace?: string;
  /** Server output; default `<repo>/.data/temporal-<port>.log` (appended to). */
  logFile?: string;
  /** Codec server the Web UI decodes payloads through (`--ui-codec-endpoint`). */
  uiCodecEndpoint?: string;
  /** How long to wait for health and search attributes. Default 60 s. */
  startTimeoutMs?: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A dev server this process started. */
export interface DevServer {
  readonly external: false;
  /** `127.0.0.1:PORT` */
  readonly address: string;
  readonly port: number;
  readonly namespace: string;
  readonly uiUrl?: string;
  readonly uiPort?: number;
  readonly pid: number;
  readonly dbFile: string;
  readonly logFile: string;
  /** Milliseconds from spawn until healthy with the search attributes visible. */
  readonly startupMs: number;
  /** Resolves when the server process has exited. */
  readonly exited: Promise<ExitInfo>;
  /** SIGTERM to the process group, up to 10 s, then SIGKILL. Idempotent. */
  stop(): Promise<void>;
  /** Sends `signal` to the server's process group (default SIGTERM) and returns at once. */
  kill(signal?: NodeJS.Signals): void;
  /** Kills the server (default SIGKILL), waits for it to exit, and starts a new one on the same port and db file. */
  restart(opts?: { signal?: NodeJS.Signals }): Promise<DevServer>;
}

/** A server given by `TEMPORAL_ADDRESS`: nothing was started, stop() does nothing. */
export interface ExternalServer {
  readonly external: true;
  readonly address: string;
  readonly namespace: string;
  readonly uiUrl?: undefined;
  stop(): Promise<void>;
}

export type ServerHandle = DevServer | ExternalServer;

export class DevServerStartError extends Error {
  override readonly name = 'DevServerStartError';
  constructor(
    message: string,
    readonly logFile: string,
    readonly logTail: string,
  ) {
    super(`${message}\n--- last lines of ${logFile} ---\n${logTail}`);
  }
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;
/** Between readiness checks over gRPC (a connection and a search-attribute listing each). */
const POLL_MS = 100;
/** Between checks that the frontend's port accepts a TCP connection, which comes first and costs almost nothing. */
const PORT_POLL_MS = 25;

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;
/** The server's `IndexedValueType` of each search attribute type, by its CLI name. */
export const INDEXED_VALUE_TYPE: Readonly<Record<SearchAttributeTypeName, number>> = {
  Text: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export async function getFreePort(): Promise<number> {
  const [port] = await getFreePorts(1);
  return port as number;
}

/** `count` distinct ports, all held open at once while picking so they differ. */
export async function getFreePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

// ---- process handling ---------------------------------------------------------------------------------------

/**
 * A small sh watchdog that runs the server and SIGTERMs it when our end of its stdin pipe closes, i.e. when
 * this Node process dies for any reason (even SIGKILL, or a jest worker torn down). Signals sent to the process
 * group reach the server directly; the watchdog forwards a SIGTERM it gets and exits when the server has.
 */
const WATCHDOG = [
  'exec 3<&0',
  '"$@" </dev/null &',
  'srv=$!',
  'trap \'kill -TERM "$srv" 2>/dev/null\' TERM INT HUP',
  '{ cat <&3 >/dev/null 2>&1; kill -TERM "$srv" 2>/dev/null; } &',
  'watcher=$!',
  'exec 3<&-',
  'while :; do wait "$srv"; rc=$?; if [ "$rc" -le 128 ] || ! kill -0 "$srv" 2>/dev/null; then break; fi; done',
  'kill "$watcher" 2>/dev/null',
  'exit "$rc"',
].join('\n');

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

// ---- readiness ----------------------------------------------------------------------------------------------

function missingAttributes(
  custom: Record<string, number> | null | undefined,
  wanted: readonly SearchAttributeDef[],
): SearchAttributeDef[] {
  return wanted.filter((sa) => custom?.[sa.name] !== INDEXED_VALUE_TYPE[sa.type]);
}

/**
 * Polls `address` until the frontend answers and every project search attribute is listed for `namespace`.
 * `abort` is checked between attempts (e.g. the server process exited).
 */
async function waitUntilReady(
  address: string,
  namespace: string,
  deadline: number,
  abort: () => string | undefined,
  /** A dev server this process started (no profile credentials); false for a TEMPORAL_ADDRESS server. */
  local = true,
): Promise<void> {
  let lastError = 'not attempted';
  let connection: Connection | undefined;
  // A server this process started listens only after its SQLite schema is set up: wait for the port first, with
  // cheap polls, instead of making gRPC connections that cannot succeed yet.
  if (local) await portOpen(address, deadline, abort);
  try {
    while (Date.now() < deadline) {
      const reason = abort();
      if (reason) throw new Error(reason);
      try {
        connection ??= (await connectClient({ address, namespace, local, connectTimeout: '2s' })).connection;
        const conn = connection;
        const res = await conn.withDeadline(Date.now() + 5_000, () =>
          conn.operatorService.listSearchAttributes({ namespace }),
        );
        const missing = missingAttributes(res.customAttributes as Record<string, number>, SEARCH_ATTRIBUTES);
        if (missing.length === 0) return;
        lastError = `search attributes not visible yet: ${missing.map((m) => m.name).join(', ')}`;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
        if (connection) {
          await connection.close().catch(() => undefined);
          connection = undefined;
        }
      }
      await sleep(POLL_MS);
    }
    throw new Error(`not ready before the deadline: ${lastError}`);
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** Resolves once `host:port` accepts a TCP connection, or at the deadline (the gRPC checks then say why). */
async function portOpen(address: string, deadline: number, abort: () => string | undefined): Promise<void> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(':')),
    Number(address.slice(address.lastIndexOf(':') + 1)),
  ];
  while (Date.now() < deadline && abort() === undefined) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, host);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(PORT_POLL_MS);
  }
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// ---- start --------------------------------------------------------------------------------------------------

/** Starts `temporal server start-dev` and resolves once it is healthy with the project's search attributes. */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const autoPorts = !opts.port || (!opts.headless && !opts.uiPort);
  const attempts = autoPorts ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      // A port picked as free can be taken before the server binds it; pick again.
      const portRace = err instanceof DevServerStartError && /address already in use/i.test(err.logTail);
      if (!portRace || attempt >= attempts) throw err;
    }
  }
}

/** The `temporal` arguments of a dev server on `port` with this project's namespace, attributes and limits. */
function startDevArgs(opts: DevServerOptions, port: number, uiPort: number | undefined, dbFile: string): string[] {
  const namespace = opts.namespace ?? 'default';
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', dbFile];
  args.push('--namespace', 'default');
  if (namespace !== 'default') args.push('--namespace', namespace);
  args.push('--log-level', 'warn');
  for (const sa of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${sa.name}=${sa.type}`);
  // Message size limits the server enforces before any worker sees a message (message-limits.ts).
  args.push(...dynamicConfigFlags());
  if (uiPort === undefined) {
    args.push('--headless');
  } else {
    args.push('--ui-port', String(uiPort), '--ui-disable-news-fetch');
    if (opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  }
  return args;
}

/** A server process under the watchdog, in its own process group, its output appended to `logFile`. */
interface Watched {
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;
  /** How it exited, once it has. */
  exitInfo(): ExitInfo | undefined;
}

async function spawnWatched(cli: string, args: readonly string[], logFile: string): Promise<Watched> {
  // The CLI reads TEMPORAL_* variables (address, namespace, profiles); keep ours out of the server's way.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TEMPORAL_')) env[k] = v;
  const logFd = fs.openSync(logFile, 'a');
  fs.writeSync(logFd, `\n=== ${new Date().toISOString()} ${cli} ${args.join(' ')}\n`);
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'ledgerloop-temporal-watchdog', cli, ...args], {
    detached: true,
    stdio: ['pipe', logFd, logFd],
    env,
  });
  fs.closeSync(logFd);
  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pid = await Promise.race([
    new Promise<number>((resolve) => child.once('spawn', () => resolve(child.pid as number))),
    spawnError.then((err) => {
      throw new DevServerStartError(`could not spawn ${cli}: ${err.message}`, logFile, tail(logFile));
    }),
  ]);
  // Neither the process nor the watchdog pipe keeps this process alive; the pipe closes when it exits.
  child.unref();
  (child.stdin as net.Socket | null)?.unref();
  child.stdin?.on('error', () => undefined);
  return { pid, exited, exitInfo: () => exitInfo };
}

async function startOnce(opts: DevServerOptions): Promise<DevServer> {
  const cli = resolveTemporalCli();
  const namespace = opts.namespace ?? 'default';
  const [pickedPort, pickedUiPort] = await getFreePorts(2);
  const port = opts.port || (pickedPort as number);
  const uiPort = opts.headless ? undefined : opts.uiPort || (pickedUiPort as number);
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const dbFile = path.resolve(opts.dbFile ?? path.join(DATA_DIR, `temporal-${port}.db`));
  const logFile = path.resolve(opts.logFile ?? path.join(DATA_DIR, `temporal-${port}.log`));
  fs.mkdirSync(path.dirname(dbFile), { recursive: true });
  fs.mkdirSync(path.dirname(logFile), { recursive: true });

  const started = Date.now();
  const proc = await spawnWatched(cli, startDevArgs(opts, port, uiPort, dbFile), logFile);
  const { pid, exited } = proc;
  const address = `127.0.0.1:${port}`;
  const deadline = started + (opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  try {
    await waitUntilReady(address, namespace, deadline, () => {
      const exit = proc.exitInfo();
      return exit ? `server exited during start-up (code ${exit.code}, signal ${exit.signal})` : undefined;
    });
  } catch (err) {
    await terminate(pid, exited);
    const message = `Temporal dev server on ${address} did not start: ${(err as Error).message}`;
    throw new DevServerStartError(message, logFile, tail(logFile));
  }
  const startupMs = Date.now() - started;

  let stopping: Promise<void> | undefined;
  return {
    external: false,
    address,
    port,
    namespace,
    ...(uiPort !== undefined ? { uiUrl: `http://127.0.0.1:${uiPort}`, uiPort } : {}),
    pid,
    dbFile,
    logFile,
    startupMs,
    exited,
    stop() {
      stopping ??= (async () => {
        await terminate(pid, exited);
        if (opts.ephemeral) for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) fs.rmSync(f, { force: true });
      })();
      return stopping;
    },
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (!proc.exitInfo()) killGroup(pid, signal);
    },
    async restart(restartOpts) {
      if (!proc.exitInfo()) killGroup(pid, restartOpts?.signal ?? 'SIGKILL');
      await exited;
      return startDevServer({ ...opts, port, ...(uiPort !== undefined ? { uiPort } : {}), dbFile, logFile });
    },
  };
}

async function terminate(pid: number, exited: Promise<ExitInfo>): Promise<void> {
  killGroup(pid, 'SIGTERM');
  const timer = new AbortController();
  const graceful = await Promise.race([
    exited.then(() => true),
    sleep(STOP_GRACE_MS, false, { signal: timer.signal }).catch(() => false),
  ]);
  timer.abort();
  if (!graceful) {
    killGroup(pid, 'SIGKILL');
    await exited;
  }
}

// ---- external servers ---------------------------------------------------------------------------------------

/**
 * Registers any of the project's search attributes that `address` lacks for `namespace`, then waits until all
 * are visible. For servers this process did not start (a dev server started with the flags already has them).
 */
export async function ensureSearchAttributes(
  address: string,
  namespace = 'default',
  timeoutMs = 30_000,
): Promise<void> {
  // A server this process did not start: the envconfig profile's TLS and API key apply.
  const { connection } = await connectClient({ address, namespace });
  try {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = missingAttributes(res.customAttributes as Record<string, number>, SEARCH_ATTRIBUTES);
    const wrongType = missing.filter((sa) => res.customAttributes?.[sa.name] !== undefined);
    if (wrongType.length > 0) {
      throw new Error(
        `search attributes registered on ${address} with another type: ${wrongType.map((s) => s.name).join(', ')}`,
      );
    }
    if (missing.length === 0) return;
    const searchAttributes: Record<string, number> = {};
    for (const sa of missing) searchAttributes[sa.name] = INDEXED_VALUE_TYPE[sa.type];
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
  } finally {
    await connection.close();
  }
  await waitUntilReady(address, namespace, Date.now() + timeoutMs, () => undefined, false);
}

/**
 * `TEMPORAL_ADDRESS` set: a handle on that server (its search attributes ensured), starting nothing.
 * Otherwise: startDevServer(opts).
 */
export async function connectOrStart(opts: DevServerOptions = {}): Promise<ServerHandle> {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) return startDevServer(opts);
  const namespace = opts.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  await ensureSearchAttributes(address, namespace);
  return { external: true, address, namespace, stop: () => Promise.resolve() };
}
