/**
 * `ledgerloop codec-server`: the codec server as a process, keys from LEDGERLOOP_CODEC_KEYS, allowed UI origins
 * from `--origins` or LEDGERLOOP_CODEC_CORS_ORIGINS (comma-separated, `*` for any). Prints one JSON line
 * `{"codecServer":"http://...","keyIds":[...]}` once listening; stops on SIGINT/SIGTERM.
 */
import { startCodecServer, DEFAULT_UI_ORIGINS, type CodecServer } from './codec-server';
import { CODEC_KEYS_ENV, CODEC_KEYS_FILE_ENV, codecFromEnv } from './data-converter';

/** Environment variable with the allowed browser origins. */
export const CODEC_CORS_ORIGINS_ENV = 'LEDGERLOOP_CODEC_CORS_ORIGINS';

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  /** Comma-separated origins; default from the environment, then DEFAULT_UI_ORIGINS. */
  readonly origins?: string;
}

/** Splits a comma-separated origin list; trailing slashes dropped. */
export function parseOrigins(list: string): string[] {
  return list
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter((o) => o !== '');
}

/** Starts the codec server from the environment's keys; throws when none are configured. */
export async function serveCodecFromEnv(opts: ServeOptions): Promise<CodecServer> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535 (got ${opts.port})`);
  }
  const codec = codecFromEnv();
  if (!codec) {
    throw new Error(
      `neither ${CODEC_KEYS_ENV} nor ${CODEC_KEYS_FILE_ENV} is set: the codec server needs the workers' keys`,
    );
  }
  const originList = opts.origins ?? process.env[CODEC_CORS_ORIGINS_ENV];
  const allowedOrigins = originList ? parseOrigins(originList) : DEFAULT_UI_ORIGINS;
  const server = await startCodecServer({
    codec,
    port: opts.port,
    host: opts.host,
    allowedOrigins,
    health: () => ({ keyIds: codec.keyIds, activeKeyId: codec.activeKeyId }),
  });
  process.stdout.write(
    `${JSON.stringify({ codecServer: server.url, listen: `${opts.host}:${server.port}`, keyIds: codec.keyIds, allowedOrigins })}\n`,
  );
  return server;
}

/** Runs until SIGINT or SIGTERM. */
export async function runCodecServerProcess(opts: ServeOptions): Promise<void> {
  const server = await serveCodecFromEnv(opts);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
}
