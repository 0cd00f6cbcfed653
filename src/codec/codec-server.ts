/**
 * A codec server in the Temporal Web UI convention: the UI (and `temporal` CLI) send payloads here to have them
 * decoded for display, or encoded for input.
 *
 *   POST /decode   body `{ "payloads": [{ "metadata": { "<k>": "<base64>" }, "data": "<base64>" }] }`
 *   POST /encode   same shape; answers with the same shape
 *   GET  /health   `{ "ok": true, "keyIds": [...], "activeKeyId": "..." }`
 *
 * The UI calls it from the browser, so it answers CORS preflights (OPTIONS) for the allowed UI origins, with the
 * `X-Namespace`, `Content-Type` and `Authorization` request headers. Anyone who can reach it can decrypt: bind it
 * to loopback or put it behind the same access control as the UI.
 */
import http from 'node:http';
import type net from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

/** The UI origins allowed by default: the dev server's Web UI on its default port. */
export const DEFAULT_UI_ORIGINS: readonly string[] = ['http://localhost:8233', 'http://127.0.0.1:8233'];

/** Largest request body accepted, in bytes. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface CodecServerOptions {
  readonly codec: PayloadCodec;
  /** Default 0 (a free port). */
  readonly port?: number;
  /** Default `127.0.0.1`. Use `0.0.0.0` inside a container. */
  readonly host?: string;
  /** Origins allowed to call from a browser; `*` allows any. Default DEFAULT_UI_ORIGINS. */
  readonly allowedOrigins?: readonly string[];
  /** Extra fields for GET /health (e.g. key ids). */
  readonly health?: () => Record<string, unknown>;
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

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new CodecRequestError(`request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

function corsHeaders(origin: string | undefined, allowed: readonly string[]): Record<string, string> {
  if (!origin) return {};
  const any = allowed.includes('*');
  if (!any && !allowed.includes(origin)) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Allow-Methods': 'POST, GET, OPTIONS',
    'Access-Control-Allow-Headers': 'X-Namespace, Content-Type, Authorization',
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The request handler on its own, for embedding in another HTTP server. */
export function codecRequestHandler(opts: CodecServerOptions): http.RequestListener {
  const allowed = opts.allowedOrigins ?? DEFAULT_UI_ORIGINS;
  return (req, res) => {
    const cors = corsHeaders(req.headers.origin, allowed);
    const url = new URL(req.url ?? '/', 'http://codec.invalid');
    const route = url.pathname.replace(/\/+$/, '') || '/';
    if (req.method === 'OPTIONS') {
      res.writeHead(req.headers.origin && !cors['Access-Control-Allow-Origin'] ? 403 : 204, cors);
      res.end();
      return;
    }
    if (req.method === 'GET' && route === '/health') {
      send(res, 200, { ok: true, ...(opts.health?.() ?? {}) }, cors);
      return;
    }
    if (req.method !== 'POST' || (route !== '/encode' && route !== '/decode')) {
      send(res, 404, { error: `no route ${req.method} ${url.pathname}` }, cors);
      return;
    }
    void (async () => {
      try {
        let body: unknown;
        try {
          body = JSON.parse(await readBody(req));
        } catch (err) {
          throw err instanceof CodecRequestError ? err : new CodecRequestError('body is not JSON');
        }
        const list = (body as { payloads?: unknown } | null)?.payloads;
        if (!Array.isArray(list)) throw new CodecRequestError('body must be { "payloads": [...] }');
        const payloads = list.map(payloadFromJson);
        const out = route === '/encode' ? await opts.codec.encode(payloads) : await opts.codec.decode(payloads);
        send(res, 200, { payloads: out.map(payloadToJson) }, cors);
      } catch (err) {
        const status = err instanceof CodecRequestError ? 400 : 422;
        const name = err instanceof Error ? err.name : 'Error';
        send(res, status, { error: err instanceof Error ? err.message : String(err), type: name }, cors);
      }
    })();
  };
}

/** Starts the codec server and resolves once it listens. */
export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer(codecRequestHandler(opts));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
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
