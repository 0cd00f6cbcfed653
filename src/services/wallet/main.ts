/**
 * Process entry of the wallet service:
 *
 *   node -r tsx/cjs src/services/wallet/main.ts --db PATH [--port N] [--retention-ms N]
 *
 * Once listening it prints exactly one line to stdout, `{"service":"wallet","url":"http://127.0.0.1:PORT","pid":N}`,
 * and it exits cleanly (server closed, database closed) on SIGTERM or SIGINT.
 */
import { createWalletService } from './wallet-service';

/** Parsed command-line flags. */
export interface WalletFlags {
  readonly dbPath: string;
  readonly port: number;
  readonly retentionMs?: number;
}

/** Parses `--db`, `--port` and `--retention-ms` (also as `--flag=value`); throws on anything else. */
export function parseWalletFlags(argv: readonly string[]): WalletFlags {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!['--db', '--port', '--retention-ms'].includes(name)) throw new Error(`unknown argument ${arg}`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${name} needs a value`);
    values.set(name, value);
  }
  const dbPath = values.get('--db');
  if (dbPath === undefined || dbPath === '') throw new Error('--db PATH is required');
  const port = integerFlag(values.get('--port') ?? '0', '--port');
  if (port > 65535) throw new Error('--port must be at most 65535');
  const retention = values.get('--retention-ms');
  return {
    dbPath,
    port,
    ...(retention === undefined ? {} : { retentionMs: integerFlag(retention, '--retention-ms') }),
  };
}

function integerFlag(text: string, name: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

async function main(): Promise<void> {
  const flags = parseWalletFlags(process.argv.slice(2));
  const service = await createWalletService(flags);
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    service.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`wallet: error while stopping on ${signal}: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(JSON.stringify({ service: 'wallet', url: service.url, pid: process.pid }) + '\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`wallet: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
