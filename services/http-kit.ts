/**
 * The HTTP layer of Ledgerloop's downstream services, on Hono (the console's framework) and its Node server
 * (@hono/node-server): a router of `:param` routes with a body limit (Hono's `bodyLimit`), JSON responses, typed
 * error responses, typed 404/405, and a way to drop a connection without an answer (a lab fault).
 *
 * Handlers are Hono handlers: they get the request's `Context` (`c.req.param('key')`, `c.req.query('tenant')`,
 * `c.req.header(name)`) and return a `Response` (`json`, `errorJson`). A thrown `HttpError` is its typed answer;
 * anything else thrown is a 500 that promises nothing about what was committed.
 */
import type http from 'node:http';
import { createAdaptorServer, getRequestListener, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DownstreamErrorCode } from '../src/downstream/protocol';

/** Default maximum request body size: 64 KiB (a service's largest body, a seed, is a few hundred bytes). */
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

/** The Hono environment of a service's routes: Node's request and response as bindings (a drop needs the socket). */
export type ServiceEnv = { Bindings: HttpBindings };
/** What a route handler receives: the request's Hono context. */
export type RequestContext = Context<ServiceEnv>;
/** A route handler: answers with a `Response` (`json`, `errorJson`, `dropConnection`), or throws `HttpError`. */
export type Handler = (c: RequestContext) => Response | Promise<Response>;

export interface RouterOptions {
  /**
   * The largest request body, in bytes, declared in Content-Length or counted while reading: larger is 413
   * `Request.TooLarge`, the rest of the body drained so the refusal reaches the client. Default 64 KiB.
   */
  readonly bodyLimitBytes?: number;
}

/** A JSON response (`application/json; charset=utf-8`). */
export function json(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
  });
}

/** A typed error response `{ ...extra, error, message, committed: false }`. */
export function errorJson(
  status: number,
  code: string,
  message: string,
  extra: Readonly<Record<string, unknown>> = {},
  headers: Readonly<Record<string, string>> = {},
): Response {
  return json(status, { ...extra, error: code, message, committed: false }, headers);
}

/** The answer to a failure a handler threw: its own for an `HttpError`, else a 500 that claims nothing. */
function failureResponse(err: unknown): Response {
  if (err instanceof HttpError) return errorJson(err.status, err.code, err.message, err.extra);
  // Unknown failure: do not claim `committed: false`, the handler may have committed before throwing.
  const message = err instanceof Error ? err.message : String(err);
  return json(500, { error: HttpErrorCode.Internal, message });
}

/** A fetch handler of a service's HTTP/1 server (a router's, or a guard in front of one). */
export type Fetch = (request: Request, env: HttpBindings) => Response | Promise<Response>;

/** Method + path-pattern router (Hono). Patterns are literal segments and `:name` parameters, e.g. `/v1/a/:id`. */
export class Router {
  readonly app = new Hono<ServiceEnv>({ strict: false });
  /** Every registered pattern under any method: tells a 405 from a 404. */
  private readonly paths = new Hono({ strict: false });

  constructor(opts: RouterOptions = {}) {
    const limit = opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
    this.app.use(
      '*',
      bodyLimit({
        maxSize: limit,
        onError: () => errorJson(413, HttpErrorCode.TooLarge, `request body exceeds ${limit} bytes`),
      }),
    );
    this.app.notFound(async (c) => {
      const known = (await this.paths.request(c.req.path)).status === 204;
      return known
        ? errorJson(405, HttpErrorCode.MethodNotAllowed, `${c.req.method} is not allowed here`)
        : errorJson(404, HttpErrorCode.RouteNotFound, `no route for ${c.req.method} ${c.req.path}`);
    });
    this.app.onError((err) => failureResponse(err));
  }

  /** Registers `handler` for `method` and `pattern`. Returns the router for chaining. */
  on(method: string, pattern: string, handler: Handler): this {
    this.app.on(method.toUpperCase(), pattern, handler);
    this.paths.all(pattern, (c) => c.body(null, 204));
    return this;
  }

  /** The fetch handler, for `serve({ fetch })` or another Hono app. */
  readonly fetch: Fetch = (request, env) => this.app.fetch(request, env);

  /** A Node request listener: `http.createServer((req, res) => void router.handle(req, res))`. */
  readonly handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> = getRequestListener(
    (request, env) => this.fetch(request, env as HttpBindings), // an HTTP/1 server: its bindings are Node's
  );
}

/** Creates an HTTP server answering every request with `fetch` (a router's, or a guard in front of one). */
export function createHttpServer(fetch: Fetch): http.Server {
  return createAdaptorServer({ fetch: (request, env) => fetch(request, env as HttpBindings) }) as http.Server;
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
 * Reads the request body as JSON (within the router's body limit). An empty or malformed body is 400
 * `Request.Invalid`.
 */
export async function readJsonBody(c: RequestContext): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') throw new HttpError(400, DownstreamErrorCode.BadRequest, 'request body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, DownstreamErrorCode.BadRequest, 'request body is not valid JSON');
  }
}

/** Destroys the connection without any response: the caller sees a reset / "other side closed". */
export function dropConnection(c: RequestContext): Response {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (incoming === undefined) throw new Error('dropping a connection needs the Node HTTP server (@hono/node-server)');
  incoming.socket.destroy();
  return RESPONSE_ALREADY_SENT;
}
