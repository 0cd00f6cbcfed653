/**
 * A deliberately tiny HTTP toolkit over `node:http` for Ledgerloop's downstream services: a router with `:param`
 * path patterns, JSON body reading with a size limit, JSON responses and typed error responses.
 */
import http from 'node:http';
import { DownstreamErrorCode } from '../src/downstream/protocol';
import { HttpBodyError, HttpBodyRefusal, readJsonBody as readBodyAsJson } from '../src/http-body';

/** Default maximum request body size: 64 KiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** Error codes of the HTTP layer itself (in addition to the protocol's codes). */
export const HttpErrorCode = {
  TooLarge: 'Request.TooLarge',
  RouteNotFound: 'Route.NotFound',
  MethodNotAllowed: 'Route.MethodNotAllowed',
  Internal: 'Service.Internal',
} as const;

/**
 * An error a handler throws to answer with `{ error: code, message, committed: false }`. Throw it only when the
 * service guarantees that no business effect was committed for the request.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

/** What a route handler receives. */
export interface RequestContext {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  readonly method: string;
  /** The decoded URL path, without the query string. */
  readonly path: string;
  /** The route pattern that matched, e.g. `/v1/operations/:key`. */
  readonly route: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/** A route handler; it must answer (or destroy the socket) itself. */
export type Handler = (ctx: RequestContext) => void | Promise<void>;

interface Route {
  readonly method: string;
  readonly pattern: string;
  readonly segments: readonly string[];
  readonly handler: Handler;
}

/** Method + path-pattern router. Patterns are literal segments and `:name` parameters, e.g. `/v1/a/:id`. */
export class Router {
  private readonly routes: Route[] = [];

  /** Registers `handler` for `method` (upper case) and `pattern`. Returns the router for chaining. */
  on(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method: method.toUpperCase(), pattern, segments: splitPath(pattern), handler });
    return this;
  }

  /** Dispatches one request; thrown `HttpError`s become typed error responses, anything else a 500. */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = (req.method ?? 'GET').toUpperCase();
      const segments = splitPath(url.pathname);
      let pathMatched = false;
      for (const route of this.routes) {
        const params = matchSegments(route.segments, segments);
        if (params === undefined) continue;
        pathMatched = true;
        if (route.method !== method) continue;
        const path = '/' + segments.join('/');
        await route.handler({ req, res, method, path, route: route.pattern, params, query: url.searchParams });
        return;
      }
      if (pathMatched) throw new HttpError(405, HttpErrorCode.MethodNotAllowed, `${method} is not allowed here`);
      throw new HttpError(404, HttpErrorCode.RouteNotFound, `no route for ${method} ${url.pathname}`);
    } catch (err) {
      if (res.headersSent || res.destroyed) return;
      if (err instanceof HttpError) {
        sendError(res, err.status, err.code, err.message, err.extra);
      } else {
        // Unknown failure: do not claim `committed: false`, the handler may have committed before throwing.
        const message = err instanceof Error ? err.message : String(err);
        sendJson(res, 500, { error: HttpErrorCode.Internal, message });
      }
    }
  }
}

/** Creates an HTTP server dispatching every request to `router`. */
export function createHttpServer(router: Router): http.Server {
  const server = http.createServer((req, res) => {
    void router.handle(req, res);
  });
  return server;
}

/** Starts `server` on `host:port` (0 = a random free port) and resolves with the bound port. */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('server has no TCP address'));
      else resolve(address.port);
    });
  });
}

/** Stops accepting connections, drops idle and active keep-alive connections, and resolves once closed. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Reads the request body as JSON. Bodies larger than `limitBytes` are refused with 413 `Request.TooLarge`; an
 * empty or malformed body with 400 `Request.Invalid` (the reading itself is `src/http-body.ts`).
 */
export async function readJsonBody(
  req: http.IncomingMessage,
  limitBytes: number = DEFAULT_BODY_LIMIT_BYTES,
): Promise<unknown> {
  try {
    return await readBodyAsJson(req, { limitBytes });
  } catch (err) {
    if (!(err instanceof HttpBodyError) || err.code === HttpBodyRefusal.Aborted) throw err;
    if (err.code === HttpBodyRefusal.TooLarge) throw new HttpError(413, HttpErrorCode.TooLarge, err.message);
    throw new HttpError(400, DownstreamErrorCode.BadRequest, err.message);
  }
}

/** Writes a JSON response. Does nothing when the socket is already gone. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** Writes a typed error `{ error, message, committed: false, ...extra }`. */
export function sendError(
  res: http.ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: Readonly<Record<string, unknown>> = {},
  headers: Readonly<Record<string, string>> = {},
): void {
  sendJson(res, status, { ...extra, error: code, message, committed: false }, headers);
}

/** Destroys the connection without any response: the caller sees a reset / "other side closed". */
export function dropConnection(res: http.ServerResponse): void {
  res.socket?.destroy();
  res.destroy();
}

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const a = actual[i] as string;
    if (p.startsWith(':')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(a);
      } catch {
        return undefined;
      }
      params[p.slice(1)] = decoded;
    } else if (p !== a) {
      return undefined;
    }
  }
  return params;
}
