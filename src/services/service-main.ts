/**
 * The process entry shared by every service's `main.ts`:
 *
 *   node -r tsx/cjs src/services/<name>/main.ts --db PATH [--port N] [--host ADDR] [--retention-ms N] [service flags]
 *
 * Once listening it prints exactly one line to stdout, `{"service":"<name>","url":"http://127.0.0.1:PORT","pid":N}`
 * (what `spawnService` waits for), and it exits cleanly (server closed, database closed) on SIGTERM or SIGINT.
 */

/** Parsed command-line flags. */
export interface ServiceFlags {
  readonly dbPath: string;
  readonly port: number;
  /** Interface to bind (default 127.0.0.1; `0.0.0.0` in a container that other containers call). */
  readonly host?: string;
  readonly retentionMs?: number;
  /** Values of the service-specific flags that were given, by flag name (e.g. `--target`). */
  readonly extra: ReadonlyMap<string, string>;
}

/** A started process that `runServiceMain` stops on a signal. */
export interface Stoppable {
  readonly url: string;
  close(): Promise<void>;
}

const COMMON_FLAGS = ['--db', '--port', '--host', '--retention-ms'];

/**
 * Parses `--db`, `--port`, `--host`, `--retention-ms` and the service's `extraFlags` (each also as `--flag=value`);
 * throws on anything else or a missing value.
 */
export function parseServiceFlags(argv: readonly string[], extraFlags: readonly string[] = []): ServiceFlags {
  const known = [...COMMON_FLAGS, ...extraFlags];
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
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
  if (host !== undefined && !/^[0-9a-fA-F.:]+$|^localhost$/.test(host)) throw new Error('--host must be an IP address or localhost');
  const extra = new Map([...values].filter(([name]) => extraFlags.includes(name)));
  return {
    dbPath,
    port,
    ...(host === undefined ? {} : { host }),
    ...(retention === undefined ? {} : { retentionMs: integerFlag(retention, '--retention-ms') }),
    extra,
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
    process.stdout.write(JSON.stringify({ service: name, url: service.url, pid: process.pid }) + '\n');
  };
  main().catch((err: unknown) => {
    process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
