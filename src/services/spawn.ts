/**
 * Starts a downstream service (or the orders relay) as a real child process
 * (`node -r tsx/cjs src/services/<name>/main.ts ...`) and waits for its one-line JSON ready message.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * Processes that can be spawned: the downstream services (each `src/services/<name>/main.ts`) and the orders
 * outbox relay (`src/services/orders/relay-main.ts`, flags `--target URL [--poll-ms N]` via `extraArgs`).
 * Add a service here and in `SERVICE_ENTRIES`.
 */
export type ServiceName = 'wallet' | 'inventory' | 'shipping' | 'orders' | 'notifications' | 'orders-relay';

/** The entry file of each spawnable process, relative to `src/services`. */
export const SERVICE_ENTRIES: Readonly<Record<ServiceName, string>> = {
  wallet: 'wallet/main.ts',
  inventory: 'inventory/main.ts',
  shipping: 'shipping/main.ts',
  orders: 'orders/main.ts',
  notifications: 'notifications/main.ts',
  'orders-relay': 'orders/relay-main.ts',
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
}

/** A running service process. */
export interface SpawnedService {
  readonly name: ServiceName;
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Sends SIGTERM and resolves when the process exited (SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

/** The repository root, from this file's location (not the working directory). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

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
  const entry = path.join(REPO_ROOT, 'src', 'services', ...SERVICE_ENTRIES[name].split('/'));
  const args = ['-r', 'tsx/cjs', entry, '--db', opts.dbPath];
  args.push('--port', String(opts.port ?? 0));
  if (opts.retentionMs !== undefined) args.push('--retention-ms', String(opts.retentionMs));
  args.push(...(opts.extraArgs ?? []));
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
    })();
    return stopping;
  };

  return new Promise<SpawnedService>((resolve, reject) => {
    let stdout = '';
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${name} service did not start: ${why}\n--- stderr ---\n${stderr}`)));
    };
    const timer = setTimeout(
      () => fail(`no ready line within ${opts.readyTimeoutMs ?? 20_000} ms`),
      opts.readyTimeoutMs ?? 20_000,
    );
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
      settled = true;
      clearTimeout(timer);
      resolve({ name, url: ready.url, pid: ready.pid, child, stop });
    });
  });
}

function parseReadyLine(line: string, name: ServiceName): { url: string; pid: number } | undefined {
  try {
    const msg = JSON.parse(line) as { service?: unknown; url?: unknown; pid?: unknown };
    if (msg.service === name && typeof msg.url === 'string' && typeof msg.pid === 'number') {
      return { url: msg.url, pid: msg.pid };
    }
  } catch {
    // not JSON: fall through
  }
  return undefined;
}
