/**
 * A codec server in the Temporal Web UI convention (a Hono app on @hono/node-server): the UI (and `temporal` CLI) send payloads here to have them
 * decoded for display, or encoded for input.
 *
 *   POST /decode   body `{ "payloads": [{ "metadata": { "<k>": "<base64>" }, "data": "<base64>" }] }`
 *   POST /encode   same shape; refused (403 Codec.EncodeDisabled) unless `enableEncode`
 *   GET  /health   `{ "ok": true }` (no token needed; it says nothing about the keys)
 *
 * Whoever can call /decode can read every payload, so every request passes, in this order:
 *
 *   1. Host: the `Host` header must be one of `allowedHosts` (default: the loopback names with the listening port).
 *      Refuses DNS-rebinding pages that reach a loopback server under a name of their own. 403 Codec.HostRefused.
 *   2. Origin: a request that carries an `Origin` (every browser request, preflight or not) must come from one of
 *      `allowedOrigins`. Checked before the body is read: a cross-origin POST is refused, never decoded.
 *      403 Codec.OriginRefused. Requests without `Origin` (the CLI, curl) go on to the token check.
 *   3. Token (every method but the OPTIONS preflight, which browsers send without credentials, and GET /health):
 *      `Authorization: Bearer <token>`, as the Web UI sends it when its codec setting "pass access token" is on
 *      (TEMPORAL_CODEC_PASS_ACCESS_TOKEN; the UI forwards the signed-in user's access token, and only to an https
 *      endpoint) and as `temporal --codec-auth 'Bearer <token>'` sends it. Compared in constant time against the
 *      configured tokens (two during a rotation). 401 Codec.Unauthenticated with `WWW-Authenticate: Bearer`.
 *      `{ kind: 'insecure-dev' }` skips this step; only the local demo uses it (see host/codec/demo-codec.ts).
 *
 * No response, error or log line names a key id: a decode failure answers 422 with the failure's type and reason.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type net from 'node:net';
import { createAdaptorServer, getRequestListener } from '@hono/node-server';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { PayloadDecryptionError } from '../../src/codec/aes-gcm-codec';

/** The UI origins allowed by default: the dev server's Web UI on its default port. */
export const DEFAULT_UI_ORIGINS: readonly string[] = ['http://localhost:8233', 'http://127.0.0.1:8233'];

/** Largest request body accepted, in bytes. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Shortest bearer token accepted: 32 characters (e.g. `openssl rand -hex 16` or more). */
export const MIN_TOKEN_LENGTH = 32;

/**
 * How callers prove they may decode. `bearer`: one of `tokens` in `Authorization: Bearer`. `insecure-dev`: no
 * token (Host and Origin are still checked); for a loopback-only demo whose Web UI has no sign-in to forward.
 */
export type CodecServerAuth =
  { readonly kind: 'bearer'; readonly tokens: readonly string[] } | { readonly kind: 'insecure-dev' };

/** Refusal types in the JSON error bodies (`type`). */
export const CodecRefusal = {
  HostRefused: 'Codec.HostRefused',
  OriginRefused: 'Codec.OriginRefused',
  Unauthenticated: 'Codec.Unauthenticated',
  EncodeDisabled: 'Codec.EncodeDisabled',
  NotFound: 'Codec.NotFound',
  BadRequest: 'Codec.BadRequest',
  /** A body over 8 MiB (413; the connection is closed, the rest of the body unread). */
  TooLarge: 'Codec.TooLarge',
} as const;

export interface CodecServerOptions {
  readonly codec: PayloadCodec;
  /** Required: there is no default way in. */
  readonly auth: CodecServerAuth;
  /** Default 0 (a free port). */
  readonly port?: number;
  /** Default `127.0.0.1`. Use `0.0.0.0` inside a container. */
  readonly host?: string;
  /** Origins allowed to call from a browser. Default DEFAULT_UI_ORIGINS. `*` is refused (no wildcard). */
  readonly allowedOrigins?: readonly string[];
  /**
   * `Host` header values accepted (`name:port`, or a bare name for any port). Default: `127.0.0.1`, `localhost`
   * and `[::1]` with the listening port.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Serve POST /encode. Default false: /encode turns plaintext into payloads a strict worker accepts, so whoever
   * can call it can feed workers input; enable it only where the UI or CLI must start or signal runs with input.
   */
  readonly enableEncode?: boolean;
}

/** A running codec server. */
export interface CodecServer {
  /** `http://HOST:PORT`, the value for the UI's codec endpoint. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A payload in the JSON shape the UI sends: every byte field base64. */
export interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Codec server options that cannot be served safely (no token, a short token, a wildcard origin). */
export class CodecServerConfigError extends Error {
  override readonly name = 'CodecServerConfigError';
}

/** A request the codec server refuses with 400. */
export class CodecRequestError extends Error {
  override readonly name = 'CodecRequestError';
}

/** UI JSON → SDK payload. Throws CodecRequestError on anything that is not that shape. */
export function payloadFromJson(p: unknown): Payload {
  if (typeof p !== 'object' || p === null) throw new CodecRequestError('each payload must be an object');
  const { metadata, data } = p as { metadata?: unknown; data?: unknown };
  const out: Record<string, Uint8Array> = {};
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== 'object') throw new CodecRequestError('payload metadata must be an object');
    for (const [k, v] of Object.entries(metadata as Record<string, unknown>)) {
      if (typeof v !== 'string') throw new CodecRequestError(`metadata ${k} must be a base64 string`);
      out[k] = Buffer.from(v, 'base64');
    }
  }
  if (data !== undefined && data !== null && typeof data !== 'string') {
    throw new CodecRequestError('payload data must be a base64 string');
  }
  return { metadata: out, data: Buffer.from((data as string | undefined) ?? '', 'base64') };
}

/** SDK payload → UI JSON. */
export function payloadToJson(p: Payload): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Checks the auth options; returns the token digests (constant-length, compared with timingSafeEqual). */
function tokenDigests(auth: CodecServerAuth): Buffer[] | undefined {
  if (auth.kind === 'insecure-dev') return undefined;
  if (auth.tokens.length === 0) throw new CodecServerConfigError('the codec server needs at least one bearer token');
  for (const t of auth.tokens) {
    if (t.length < MIN_TOKEN_LENGTH || /\s/.test(t)) {
      throw new CodecServerConfigError(`a codec token must have at least ${MIN_TOKEN_LENGTH} characters and no spaces`);
    }
  }
  return auth.tokens.map(digest);
}

function bearerMatches(header: string | undefined, digests: readonly Buffer[]): boolean {
  const m = /^Bearer ([^\s]+)$/i.exec(header?.trim() ?? '');
  if (!m) return false;
  const got = digest(m[1]!);
  let ok = false;
  for (const d of digests) ok = timingSafeEqual(got, d) || ok; // no early exit
  return ok;
}

function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Allow-Methods': 'POST, GET, OPTIONS',
    'Access-Control-Allow-Headers': 'X-Namespace, Content-Type, Authorization',
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  };
}

function send(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
  });
}

function refuse(status: number, type: string, error: string, headers: Record<string, string> = {}): Response {
  // The request body (if any) is not read: close the connection rather than drain it.
  return send(status, { error, type }, { ...headers, Connection: 'close' });
}

/** The default Host allow-list for a server listening on `port`. */
export function loopbackHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.split(':')[0];
  return allowed.some((a) => {
    const x = a.trim().toLowerCase();
    return x === h || x === name;
  });
}

interface HandlerOptions extends CodecServerOptions {
  /** Resolved Host allow-list (the default needs the listening port). */
  readonly hosts: () => readonly string[];
}

type CodecEnv = { Variables: { cors: Record<string, string> } };

/** What a codec answers for `route`, or the typed refusal of the body or the payloads. */
async function codecAnswer(c: Context<CodecEnv>, codec: PayloadCodec, route: 'encode' | 'decode'): Promise<Response> {
  const cors = c.get('cors');
  try {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new CodecRequestError('body is not JSON');
    }
    const list = (body as { payloads?: unknown } | null)?.payloads;
    if (!Array.isArray(list)) throw new CodecRequestError('body must be { "payloads": [...] }');
    const payloads = list.map(payloadFromJson);
    const out = route === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
    return send(200, { payloads: out.map(payloadToJson) }, cors);
  } catch (err) {
    if (err instanceof CodecRequestError) return send(400, { error: err.message, type: CodecRefusal.BadRequest }, cors);
    // The reason only: the codec's message and keyId stay in this process.
    const reason = err instanceof PayloadDecryptionError ? { type: err.name, reason: err.reason } : undefined;
    const type = err instanceof Error ? err.name : 'Error';
    return send(422, { error: 'a payload cannot be decoded', ...(reason ?? { type }) }, cors);
  }
}

/** The codec server's Hono app: the checks in the order the header says, then the two codec routes. */
function codecApp(opts: HandlerOptions): Hono<CodecEnv> {
  const origins = opts.allowedOrigins ?? DEFAULT_UI_ORIGINS;
  if (origins.includes('*')) {
    throw new CodecServerConfigError('the codec server does not allow any origin (*): list the Web UI origins');
  }
  const digests = tokenDigests(opts.auth);
  const app = new Hono<CodecEnv>({ strict: false });
  // 1. Host and 2. Origin, for every method, before anything else is read.
  app.use('*', async (c, next) => {
    if (!hostAllowed(c.req.header('host'), opts.hosts()))
      return refuse(403, CodecRefusal.HostRefused, 'this codec server does not answer to that Host');
    const origin = c.req.header('origin');
    if (origin !== undefined && !origins.includes(origin))
      return refuse(403, CodecRefusal.OriginRefused, 'this origin may not call the codec server');
    c.set('cors', origin ? corsHeaders(origin) : {});
    await next();
  });
  app.options('*', (c) => new Response(null, { status: 204, headers: c.get('cors') }));
  app.get('/health', (c) => send(200, { ok: true }, c.get('cors')));
  // 3. Token, for everything but the preflight and /health (answered above).
  app.use('*', async (c, next) => {
    if (digests && !bearerMatches(c.req.header('authorization'), digests))
      return refuse(401, CodecRefusal.Unauthenticated, 'a valid bearer token is required', {
        ...c.get('cors'),
        'WWW-Authenticate': 'Bearer realm="ledgerloop-codec"',
      });
    await next();
  });
  app.post('/encode', async (c, next) => {
    if (opts.enableEncode !== true)
      return refuse(403, CodecRefusal.EncodeDisabled, '/encode is disabled on this codec server', c.get('cors'));
    await next();
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        refuse(413, CodecRefusal.TooLarge, `request body larger than ${MAX_BODY_BYTES} bytes`, c.get('cors')),
    }),
  );
  app.post('/decode', (c) => codecAnswer(c, opts.codec, 'decode'));
  app.post('/encode', (c) => codecAnswer(c, opts.codec, 'encode'));
  app.notFound((c) => refuse(404, CodecRefusal.NotFound, 'no such route', c.get('cors') ?? {}));
  return app;
}

/**
 * The request handler on its own, for embedding in another HTTP server. `allowedHosts` is required here: there
 * is no listening port to derive the default from.
 */
export function codecRequestHandler(
  opts: CodecServerOptions & { readonly allowedHosts: readonly string[] },
): http.RequestListener {
  const app = codecApp({ ...opts, hosts: () => opts.allowedHosts });
  return getRequestListener((request) => app.fetch(request));
}

/** Starts the codec server and resolves once it listens. Throws CodecServerConfigError on unsafe options. */
export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const host = opts.host ?? '127.0.0.1';
  let port = 0;
  const hosts = opts.allowedHosts ?? [];
  const own = (): string[] => (host === '0.0.0.0' || host === '::' || host === '127.0.0.1' ? [] : [`${host}:${port}`]);
  const app = codecApp({
    ...opts,
    hosts: () => (opts.allowedHosts ? hosts : [...loopbackHosts(port), ...own()]),
  });
  const server = createAdaptorServer({ fetch: (request) => app.fetch(request) }) as http.Server;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  port = (server.address() as net.AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
