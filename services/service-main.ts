/**
 * The process entry shared by every service's `main.ts`:
 *
 *   node -r tsx/cjs services/<name>/main.ts --db PATH [--port N] [--host ADDR] [--retention-ms N]
 *       [--admin-port N [--lab]] [--insecure-dev] [service flags]
 *
 * A service refuses to start without `LEDGERLOOP_CAPABILITY_KEYS` (`Service.KeysMissing`, exit 1) unless given
 * `--insecure-dev`. `--admin-port N` (or `LEDGERLOOP_ADMIN_PORT`) enables the admin listener on 127.0.0.1:N,
 * which needs `LEDGERLOOP_ADMIN_TOKEN` (at least 32 characters); `--lab` adds fault injection there (and only
 * there). Once listening it prints exactly one line to stdout,
 * `{"service":"<name>","url":"http://127.0.0.1:PORT","pid":N[,"adminUrl":...,"adminBoundAddress":...]}` (what
 * `spawnService` waits for), and it exits cleanly (server closed, database closed) on SIGTERM or SIGINT.
 */
import {
  ADMIN_PORT_ENV,
  ADMIN_TOKEN_ENV,
  checkAdminToken,
  ServiceConfigError,
  type AdminConfig,
} from './admin-listener';

/** Parsed command-line flags. */
export interface ServiceFlags {
  readonly dbPath: string;
  readonly port: number;
  /** Interface to bind (default 127.0.0.1; `0.0.0.0` in a container that other containers call). */
  readonly host?: string;
  readonly retentionMs?: number;
  /** Values of the service-specific flags that were given, by flag name (e.g. `--target`). */
  readonly extra: ReadonlyMap<string, string>;
  /** `--insecure-dev`: start without a verification key. */
  readonly insecureDev: boolean;
  /** The admin listener, when `--admin-port` or `LEDGERLOOP_ADMIN_PORT` enables it. */
  readonly admin?: AdminConfig;
}

/** A started process that `runServiceMain` stops on a signal. */
export interface Stoppable {
  readonly url: string;
  readonly adminUrl?: string;
  readonly adminBoundAddress?: string;
  close(): Promise<void>;
}

const COMMON_FLAGS = ['--db', '--port', '--host', '--retention-ms', '--admin-port'];
const SWITCHES = ['--insecure-dev', '--lab'];

/**
 * Parses `--db`, `--port`, `--host`, `--retention-ms`, `--admin-port`, the switches `--insecure-dev` and `--lab`,
 * and the service's `extraFlags` (each also as `--flag=value`); throws on anything else or a missing value. The
 * admin port may also come from `LEDGERLOOP_ADMIN_PORT`, the admin token only from `LEDGERLOOP_ADMIN_TOKEN` (never
 * a flag: command lines are visible to every user of the machine).
 */
export function parseServiceFlags(
  argv: readonly string[],
  extraFlags: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): ServiceFlags {
  const known = [...COMMON_FLAGS, ...extraFlags];
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (SWITCHES.includes(arg)) {
      switches.add(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(name)) throw new Error(`unknown argument ${arg}`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${name} needs a value`);
    values.set(name, value);
  }
  const dbPath = values.get('--db');
  if (dbPath === undefined || dbPath === '') throw new Error('--db PATH is required');
  const port = integerFlag(values.get('--port') ?? '0', '--port');
  if (port > 65535) throw new Error('--port must be at most 65535');
  const retention = values.get('--retention-ms');
  const host = values.get('--host');
  if (host !== undefined && !/^[0-9a-fA-F.:]+$|^localhost$/.test(host))
    throw new Error('--host must be an IP address or localhost');
  const extra = new Map([...values].filter(([name]) => extraFlags.includes(name)));
  const adminPortText = values.get('--admin-port') ?? (env[ADMIN_PORT_ENV] || undefined);
  const lab = switches.has('--lab');
  let admin: AdminConfig | undefined;
  if (adminPortText !== undefined) {
    const adminPort = integerFlag(adminPortText, '--admin-port');
    if (adminPort > 65535) throw new Error('--admin-port must be at most 65535');
    admin = { port: adminPort, token: checkAdminToken(env[ADMIN_TOKEN_ENV]), lab };
  } else if (lab) {
    throw new ServiceConfigError('Service.LabWithoutAdmin', '--lab needs the admin listener (--admin-port N)');
  }
  return {
    dbPath,
    port,
    ...(host === undefined ? {} : { host }),
    ...(retention === undefined ? {} : { retentionMs: integerFlag(retention, '--retention-ms') }),
    extra,
    insecureDev: switches.has('--insecure-dev'),
    ...(admin === undefined ? {} : { admin }),
  };
}

/** Parses a non-negative integer flag value, or throws naming the flag. */
export function integerFlag(text: string, name: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

/**
 * Runs a service process: parses the flags, starts it, prints the ready line, and stops it on SIGTERM/SIGINT.
 * A start failure is written to stderr and exits with code 1.
 */
export function runServiceMain(
  name: string,
  start: (flags: ServiceFlags) => Promise<Stoppable>,
  extraFlags: readonly string[] = [],
): void {
  const main = async (): Promise<void> => {
    const service = await start(parseServiceFlags(process.argv.slice(2), extraFlags));
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      service.close().then(
        () => process.exit(0),
        (err: unknown) => {
          process.stderr.write(`${name}: error while stopping on ${signal}: ${String(err)}\n`);
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    if (service.adminUrl === undefined) process.stderr.write(`${name}: no admin listener (production start)\n`);
    const ready = {
      service: name,
      url: service.url,
      pid: process.pid,
      ...(service.adminUrl === undefined ? {} : { adminUrl: service.adminUrl }),
      ...(service.adminBoundAddress === undefined ? {} : { adminBoundAddress: service.adminBoundAddress }),
    };
    process.stdout.write(JSON.stringify(ready) + '\n');
  };
  main().catch((err: unknown) => {
    process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
