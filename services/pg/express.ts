/**
 * Ledgerloop's contract on an Express app the team already has, over `PgOperations`: the same checks and answers
 * as the Hono middleware (middleware.ts), on Express's request and response.
 *
 *   app.use(express.json());
 *   app.post('/refunds', expressOperation(ops, { service: 'shop', scope: 'shop.refund', capabilityKeys }),
 *     (req, res) => res.locals.runOperation(async (tx) => { ...; return { receipt, result }; }));
 *   app.use(expressOperationRoutes(ops, { service: 'shop', capabilityKeys }));   // lookup and seal
 *
 * Nothing here imports Express: the handlers take Node's own request and response (Express's extend them), so the
 * kit adds no dependency. A body Express already parsed (`express.json()`) is used as parsed; without a parser the
 * handler reads the JSON itself. Fail closed as the Hono one: without `capabilityKeys` it refuses to be built
 * unless `insecureDev` says so.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PoolClient } from 'pg';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { CAPABILITY_HEADER } from '../../src/capability/capability';
import { Id } from '../body-schemas';
import { errorJson, HttpError } from '../http-kit';
import {
  admitOperation,
  answerLookup,
  checkCallers,
  respond,
  SealBody,
  type CallerCheck,
  type OperationMiddlewareOptions,
} from './middleware';
import type { OperationEffect, PgOperations } from './operations';

/** Express's request, as far as the kit reads it: Node's, with the body a parser may have set. */
export type ExpressRequest = IncomingMessage & { body?: unknown };
/** Express's response, as far as the kit writes it: Node's, with `locals` for the route's handler. */
export type ExpressResponse = ServerResponse & { locals: Record<string, unknown> };
export type ExpressNext = (err?: unknown) => void;

/** What the middleware leaves in `res.locals` for the route's handler. */
export interface OperationLocals {
  /** The request's JSON body, its hash checked (validate its shape in the handler, e.g. with zod). */
  readonly operationBody: unknown;
  /** Runs the effect in the key row's transaction and answers the request. */
  readonly runOperation: (work: (tx: PoolClient) => Promise<OperationEffect>) => Promise<void>;
}

const MAX_BODY_BYTES = 1 << 20;

/** The request's headers as a fetch `Headers` (a repeated header joined, as fetch joins it). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/** The JSON body: the one a parser set, else read from the request (at most 1 MiB). */
async function bodyOf(req: ExpressRequest): Promise<unknown> {
  if (req.body !== undefined) return req.body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

/** Writes a fetch `Response` (what the kit's answers are) to Node's response. */
export async function sendResponse(res: ServerResponse, answer: Response): Promise<void> {
  res.statusCode = answer.status;
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  res.end(Buffer.from(await answer.arrayBuffer()));
}

/** The middleware of one mutating route on Express; see the module comment. */
export function expressOperation(
  ops: PgOperations,
  opts: OperationMiddlewareOptions,
): (req: ExpressRequest, res: ExpressResponse, next: ExpressNext) => Promise<void> {
  checkCallers(opts);
  return async (req, res, next) => {
    try {
      const { op, body } = await admitOperation(opts, headersOf(req), () => bodyOf(req));
      const locals: OperationLocals = {
        operationBody: body,
        runOperation: async (work) => sendResponse(res, respond(await ops.withOperation(op, work))),
      };
      Object.assign(res.locals, locals);
    } catch (err) {
      if (err instanceof HttpError) return sendResponse(res, errorJson(err.status, err.code, err.message));
      return next(err);
    }
    next();
  };
}

const LOOKUP = /^\/v1\/operations\/([^/?]+)(\/seal)?(?:\?.*)?$/;

/**
 * `GET /v1/operations/:key?tenant=T` and `POST /v1/operations/:key/seal` (`{ "tenant": T }`) on Express, answered
 * as the Hono routes answer them (`operationRoutes`); any other request goes on to `next`.
 */
export function expressOperationRoutes(
  ops: PgOperations,
  opts: CallerCheck,
): (req: ExpressRequest, res: ExpressResponse, next: ExpressNext) => Promise<void> {
  checkCallers(opts);
  return async (req, res, next) => {
    const m = LOOKUP.exec(req.url ?? '');
    const seal = m?.[2] !== undefined;
    if (m === null || req.method !== (seal ? 'POST' : 'GET')) return next();
    try {
      const key = decodeURIComponent(m[1]!);
      const capability = headersOf(req).get(CAPABILITY_HEADER) ?? undefined;
      let tenant: string;
      if (seal) {
        const parsed = SealBody.safeParse(await bodyOf(req).catch(() => undefined));
        if (!parsed.success)
          return sendResponse(res, errorJson(400, DownstreamErrorCode.BadRequest, 'body must be { "tenant": "..." }'));
        tenant = parsed.data.tenant;
      } else {
        tenant = new URL(req.url ?? '', 'http://local').searchParams.get('tenant') ?? '';
        if (!Id.safeParse(tenant).success)
          return sendResponse(res, errorJson(400, DownstreamErrorCode.BadRequest, 'tenant is required (?tenant=)'));
      }
      await sendResponse(res, await answerLookup(ops, opts, capability, { key, tenant, seal }));
    } catch (err) {
      next(err);
    }
  };
}
