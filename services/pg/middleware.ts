/**
 * Ledgerloop's contract on a Hono app the team already has, over `PgOperations`:
 *
 *   app.post('/refunds', operationMiddleware(ops, { service: 'shop', scope: 'shop.refund', capabilityKeys }),
 *     (c) => c.var.runOperation(async (tx) => { ...; return { receipt, result }; }));
 *   app.route('/', operationRoutes(ops, { service: 'shop', capabilityKeys }));   // lookup and seal
 *
 * The middleware checks, before any row exists: the idempotency headers, the intent time, the body's canonical
 * hash against `X-Arguments-Hash`, and the capability for exactly this service, key, arguments, tenant and scope.
 * Then the route's handler runs its effect through `c.var.runOperation`, which answers as every Ledgerloop
 * service does (201 with the result, replayed with `Idempotent-Replayed`, 422 for a retained refusal, 409 for a
 * conflict). Fail closed: without `capabilityKeys` the middleware refuses to be built unless `insecureDev` says so.
 */
import type { MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import type { PoolClient } from 'pg';
import { z } from 'zod';
import { CAPABILITY_HEADER, verifyCapability } from '../../src/capability/capability';
import type { CapabilityKeySet } from '../../src/capability/capability-keys';
import { hashCanonical } from '../../src/domain/canonical';
import { DownstreamErrorCode, HEADER_REPLAYED, HEADER_RETAINED_UNTIL } from '../../src/downstream/protocol';
import { Id } from '../body-schemas';
import { errorJson, HttpError, json } from '../http-kit';
import { parseMutationHeaders } from '../idempotent-route';
import { verifyLookupCapability } from '../lookup-capability';
import type { OperationEffect, OperationOutcome, PgOperations } from './operations';

/** How the middleware and the routes verify callers. */
export type CallerCheck =
  /** The public keys capabilities are verified with (LEDGERLOOP_CAPABILITY_KEYS). */
  | { readonly service: string; readonly capabilityKeys: CapabilityKeySet; readonly insecureDev?: never }
  /** Verify nothing: a local development start only. */
  | { readonly service: string; readonly insecureDev: true; readonly capabilityKeys?: never };

export type OperationMiddlewareOptions = CallerCheck & {
  /** The effect the key protects, e.g. `shop.refund`. */
  readonly scope: string;
};

/** The Hono variables the middleware sets for the route's handler. */
export interface OperationVariables {
  /** The request's JSON body, its hash checked (validate its shape in the handler, e.g. with zod). */
  readonly operationBody: unknown;
  /** Runs the effect in the key row's transaction and answers the request. */
  readonly runOperation: (work: (tx: PoolClient) => Promise<OperationEffect>) => Promise<Response>;
}

export type OperationEnv = { Variables: OperationVariables };

function checkCallers(opts: CallerCheck): void {
  const { service, capabilityKeys, insecureDev } = opts as {
    service: string;
    capabilityKeys?: unknown;
    insecureDev?: unknown;
  };
  if (capabilityKeys === undefined && insecureDev !== true)
    throw new TypeError(`${service}: capabilityKeys are required (or insecureDev: true for a local start)`);
}

function canonicalHash(value: unknown): string | undefined {
  try {
    return hashCanonical(value);
  } catch {
    return undefined;
  }
}

/** The middleware of one mutating route; see the module comment. */
export function operationMiddleware(
  ops: PgOperations,
  opts: OperationMiddlewareOptions,
): MiddlewareHandler<OperationEnv> {
  checkCallers(opts);
  return async (c, next) => {
    try {
      const headers = parseMutationHeaders(c.req.raw.headers);
      if (!Number.isFinite(headers.intentAtMs))
        throw new HttpError(400, DownstreamErrorCode.IntentTimeMissing, 'X-Intent-At must be an ISO 8601 time');
      const body: unknown = await c.req.json().catch(() => {
        throw new HttpError(400, DownstreamErrorCode.BadRequest, 'the body is not JSON');
      });
      if (canonicalHash(body) !== headers.argumentsHash)
        throw new HttpError(400, DownstreamErrorCode.ArgumentsHashInvalid, 'X-Arguments-Hash does not match the body');
      const rawTenant = (body as { tenant?: unknown } | null)?.tenant;
      const tenant = typeof rawTenant === 'string' ? rawTenant : '';
      if (!Id.safeParse(tenant).success)
        throw new HttpError(400, DownstreamErrorCode.BadRequest, 'the body names no tenant');
      if (opts.capabilityKeys !== undefined) {
        try {
          verifyCapability(c.req.header(CAPABILITY_HEADER), opts.capabilityKeys, {
            audience: opts.service,
            key: headers.key,
            argumentsHash: headers.argumentsHash,
            tenant,
            scope: opts.scope,
            nowMs: Date.now(),
          });
        } catch (err) {
          throw new HttpError(403, DownstreamErrorCode.CapabilityInvalid, (err as Error).message);
        }
      }
      c.set('operationBody', body);
      c.set('runOperation', async (work) =>
        respond(await ops.withOperation({ ...headers, tenant, scope: opts.scope }, work)),
      );
    } catch (err) {
      if (err instanceof HttpError) return errorJson(err.status, err.code, err.message);
      throw err;
    }
    await next();
  };
}

/** The answer every Ledgerloop service gives for an outcome. */
export function respond(outcome: OperationOutcome, successStatus = 201): Response {
  switch (outcome.kind) {
    case 'completed':
    case 'replayed': {
      const headers: Record<string, string> = { [HEADER_RETAINED_UNTIL]: outcome.record.expiresAt };
      if (outcome.kind === 'replayed') headers[HEADER_REPLAYED] = 'true';
      return json(successStatus, outcome.record.result ?? null, headers);
    }
    case 'failed':
    case 'retained_failure': {
      const error = outcome.record.error ?? { error: DownstreamErrorCode.Rejected, message: 'rejected' };
      return json(422, { ...error, committed: false });
    }
    case 'conflict':
      return errorJson(409, outcome.code, outcome.message);
    case 'refused':
      return errorJson(outcome.code === DownstreamErrorCode.IntentExpired ? 409 : 400, outcome.code, outcome.message);
  }
}

const SealBody = z.strictObject({ tenant: Id });

/**
 * `GET /v1/operations/:key?tenant=T` and `POST /v1/operations/:key/seal` (`{ "tenant": T }`) on the same table
 * `withOperation` writes, answering as the SQLite kit's standard routes do (the contract transport reads both).
 */
export function operationRoutes(ops: PgOperations, opts: CallerCheck): Hono {
  checkCallers(opts);
  const answer = async (
    c: { req: { header(n: string): string | undefined } },
    key: string,
    tenant: string,
    seal: boolean,
  ) => {
    if (opts.capabilityKeys !== undefined) {
      try {
        verifyLookupCapability(c.req.header(CAPABILITY_HEADER), opts.capabilityKeys, {
          service: opts.service,
          key,
          tenant,
          seal,
        });
      } catch (err) {
        return errorJson(403, DownstreamErrorCode.CapabilityInvalid, (err as Error).message);
      }
    }
    const found = await ops.lookup(tenant, key, { seal });
    if (found.kind === 'found') return json(200, found.record);
    const message = found.sealed ? `no effect under ${key}; the key is sealed` : `no record under ${key}`;
    return json(404, { error: DownstreamErrorCode.NotFound, message, sealed: found.sealed });
  };
  return new Hono()
    .get('/v1/operations/:key', (c) => {
      const tenant = c.req.query('tenant') ?? '';
      if (!Id.safeParse(tenant).success)
        return errorJson(400, DownstreamErrorCode.BadRequest, 'tenant is required (?tenant=)');
      return answer(c, c.req.param('key'), tenant, false);
    })
    .post('/v1/operations/:key/seal', async (c) => {
      const parsed = SealBody.safeParse(await c.req.json().catch(() => undefined));
      if (!parsed.success) return errorJson(400, DownstreamErrorCode.BadRequest, 'body must be { "tenant": "..." }');
      return answer(c, c.req.param('key'), parsed.data.tenant, true);
    });
}
