/**
 * `ledgerloop codec-server`: the codec server as a process. Configuration (flags win over the environment):
 *
 *   LEDGERLOOP_CODEC_KEYS / LEDGERLOOP_CODEC_KEYS_FILE   the workers' keys (required)
 *   LEDGERLOOP_CODEC_TOKEN        bearer token(s), comma-separated (two during a rotation), each >= 32 characters
 *   LEDGERLOOP_CODEC_TOKEN_FILE   a file holding that value (a Docker secret), read when the variable is unset
 *   --insecure-dev                serve without a token; refused unless bound to loopback. Never in a deployment.
 *   --origins / LEDGERLOOP_CODEC_CORS_ORIGINS   allowed browser origins, comma-separated (no `*`)
 *   --allowed-hosts / LEDGERLOOP_CODEC_ALLOWED_HOSTS   accepted Host headers (default: loopback with the port)
 *   --enable-encode / LEDGERLOOP_CODEC_ENABLE_ENCODE=1 serve POST /encode (default off)
 *
 * No token and no --insecure-dev: the process refuses to start. Prints one JSON line once listening (no key ids,
 * no token); stops on SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import {
  CodecServerConfigError,
  DEFAULT_UI_ORIGINS,
  startCodecServer,
  type CodecServer,
  type CodecServerAuth,
} from './codec-server';
import { configValue } from '../../src/config';
import { CODEC_KEYS_ENV, CODEC_KEYS_FILE_ENV, codecFromEnv } from '../../src/codec/data-converter';

type Env = Readonly<Record<string, string | undefined>>;

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  /** Comma-separated origins; default from the environment, then DEFAULT_UI_ORIGINS. */
  readonly origins?: string;
  /** Comma-separated Host header values; default from the environment, then loopback with the port. */
  readonly allowedHosts?: string;
  /** Serve /encode; default from LEDGERLOOP_CODEC_ENABLE_ENCODE. */
  readonly enableEncode?: boolean;
  /** Serve without a token (loopback only). */
  readonly insecureDev?: boolean;
}

/** Splits a comma-separated list; blanks and trailing slashes dropped. */
export function parseOrigins(list: string): string[] {
  return list
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter((o) => o !== '');
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

/**
 * The auth the environment configures: the tokens of LEDGERLOOP_CODEC_TOKEN (or the file LEDGERLOOP_CODEC_TOKEN_FILE
 * names); `insecure-dev` only when asked for and bound to loopback. Throws CodecServerConfigError otherwise.
 */
export function codecAuthFromEnv(
  opts: { insecureDev?: boolean; host: string },
  env: Env = process.env,
): CodecServerAuth {
  let spec = configValue('LEDGERLOOP_CODEC_TOKEN', env)?.trim();
  const file = configValue('LEDGERLOOP_CODEC_TOKEN_FILE', env)?.trim();
  if (!spec && file) {
    try {
      spec = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new CodecServerConfigError(
        `LEDGERLOOP_CODEC_TOKEN_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  const tokens = spec
    ? spec
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '')
    : [];
  if (tokens.length > 0) return { kind: 'bearer', tokens };
  if (opts.insecureDev) {
    if (!isLoopback(opts.host)) {
      throw new CodecServerConfigError(`--insecure-dev serves without a token: bind it to loopback, not ${opts.host}`);
    }
    return { kind: 'insecure-dev' };
  }
  throw new CodecServerConfigError(
    'the codec server decrypts for whoever calls it: set LEDGERLOOP_CODEC_TOKEN (or LEDGERLOOP_CODEC_TOKEN_FILE); ' +
      '--insecure-dev serves a loopback-only development server without one',
  );
}

/** Starts the codec server from the environment's keys and token; throws when either is missing. */
export async function serveCodecFromEnv(opts: ServeOptions, env: Env = process.env): Promise<CodecServer> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535 (got ${opts.port})`);
  }
  const auth = codecAuthFromEnv({ host: opts.host, ...(opts.insecureDev ? { insecureDev: true } : {}) }, env);
  const codec = codecFromEnv(env);
  if (!codec) {
    throw new Error(
      `neither ${CODEC_KEYS_ENV} nor ${CODEC_KEYS_FILE_ENV} is set: the codec server needs the workers' keys`,
    );
  }
  const originList = opts.origins ?? configValue('LEDGERLOOP_CODEC_CORS_ORIGINS', env);
  const allowedOrigins = originList ? parseOrigins(originList) : DEFAULT_UI_ORIGINS;
  const hostList = opts.allowedHosts ?? configValue('LEDGERLOOP_CODEC_ALLOWED_HOSTS', env);
  const enableEncode = opts.enableEncode ?? configValue('LEDGERLOOP_CODEC_ENABLE_ENCODE', env) ?? false;
  const server = await startCodecServer({
    codec,
    auth,
    port: opts.port,
    host: opts.host,
    allowedOrigins,
    ...(hostList ? { allowedHosts: parseOrigins(hostList) } : {}),
    enableEncode,
  });
  process.stdout.write(
    `${JSON.stringify({ codecServer: server.url, listen: `${opts.host}:${server.port}`, auth: auth.kind, encode: enableEncode, allowedOrigins })}\n`,
  );
  if (auth.kind === 'insecure-dev') {
    process.stderr.write('codec-server: --insecure-dev: no token required (loopback only; never in a deployment)\n');
  }
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
