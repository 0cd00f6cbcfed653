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
import { FlagError, FlagRefusal, integerFlag, parseFlags } from '../src/flags';

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

/** The flags every service takes (`--admin-token` is not one: command lines are visible to every user). */
const COMMON_OPTIONS = {
  db: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'retention-ms': { type: 'string' },
  'admin-port': { type: 'string' },
  'insecure-dev': { type: 'boolean' },
  lab: { type: 'boolean' },
} as const;

/**
 * Parses `--db`, `--port`, `--host`, `--retention-ms`, `--admin-port`, the switches `--insecure-dev` and `--lab`,
 * and the service's `extraFlags` (each also as `--flag=value`); throws a `FlagError` on anything else or a missing
 * value. The admin port may also come from `LEDGERLOOP_ADMIN_PORT`, the admin token only from
 * `LEDGERLOOP_ADMIN_TOKEN` (never a flag: command lines are visible to every user of the machine).
 */
export function parseServiceFlags(
  argv: readonly string[],
  extraFlags: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): ServiceFlags {
  const extraOptions = Object.fromEntries(extraFlags.map((f) => [f.replace(/^--/, ''), { type: 'string' as const }]));
  const values = parseFlags(argv, { ...extraOptions, ...COMMON_OPTIONS });
  const dbPath = values.db;
  if (dbPath === undefined || dbPath === '') throw new FlagError(FlagRefusal.MissingValue, '--db PATH is required');
  const port = portFlag(values.port ?? '0', '--port');
  const host = values.host;
  if (host !== undefined && !/^[0-9a-fA-F.:]+$|^localhost$/.test(host))
    throw new FlagError(FlagRefusal.Invalid, '--host must be an IP address or localhost');
  const extra = new Map<string, string>();
  for (const f of extraFlags) {
    const v = (values as Record<string, unknown>)[f.replace(/^--/, '')];
    if (typeof v === 'string') extra.set(f, v);
  }
  const adminPortText = values['admin-port'] ?? (env[ADMIN_PORT_ENV] || undefined);
  const lab = values.lab === true;
  let admin: AdminConfig | undefined;
  if (adminPortText !== undefined) {
    admin = { port: portFlag(adminPortText, '--admin-port'), token: checkAdminToken(env[ADMIN_TOKEN_ENV]), lab };
  } else if (lab) {
    throw new ServiceConfigError('Service.LabWithoutAdmin', '--lab needs the admin listener (--admin-port N)');
  }
  const retention = values['retention-ms'];
  return {
    dbPath,
    port,
    ...(host === undefined ? {} : { host }),
    ...(retention === undefined ? {} : { retentionMs: integerFlag(retention, '--retention-ms') }),
    extra,
    insecureDev: values['insecure-dev'] === true,
    ...(admin === undefined ? {} : { admin }),
  };
}

function portFlag(text: string, name: string): number {
  const port = integerFlag(text, name);
  if (port > 65535) throw new FlagError(FlagRefusal.Invalid, `${name} must be at most 65535`);
  return port;
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
