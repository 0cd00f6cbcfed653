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
import type { FaultInjector } from '../faults';
import { errorJson, HttpError, json, type RequestContext } from '../http-kit';
import { parseMutationHeaders, runAfterCommit, runBeforeCommit } from '../idempotent-route';
import { verifyLookupCapability } from '../lookup-capability';
import type { Operation, OperationEffect, OperationOutcome, PgOperations } from './operations';

/** How the middleware and the routes verify callers. */
export type CallerCheck =
  /** The public keys capabilities are verified with (LEDGERLOOP_CAPABILITY_KEYS). */
  | { readonly service: string; readonly capabilityKeys: CapabilityKeySet; readonly insecureDev?: never }
  /** Verify nothing: a local development start only. */
  | { readonly service: string; readonly insecureDev: true; readonly capabilityKeys?: never };

export type OperationMiddlewareOptions = CallerCheck & {
  /** The effect the key protects, e.g. `shop.refund`. */
  readonly scope: string;
  /**
   * The lab's fault injector (rules armed through `labAdminApp`'s `POST /admin/faults`), run around the effect's
   * transaction as the SQLite kit runs it: `before_commit` (nothing written yet) and `after_commit` (the effect
   * and its key row committed, the answer not sent). Default none: a production start has no injector, so no
   * request can arm a fault.
   */
  readonly faults?: FaultInjector;
};

/** The Hono variables the middleware sets for the route's handler. */
export interface OperationVariables {
  /** The request's JSON body, its hash checked (validate its shape in the handler, e.g. with zod). */
  readonly operationBody: unknown;
  /** Runs the effect in the key row's transaction and answers the request. */
  readonly runOperation: (work: (tx: PoolClient) => Promise<OperationEffect>) => Promise<Response>;
}

export type OperationEnv = { Variables: OperationVariables };

/** Fail closed: no capability keys and no `insecureDev: true` refuses to build the middleware. */
export function checkCallers(opts: CallerCheck): void {
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

/** A mutating request the checks admitted: its operation (the key row's) and its JSON body, its hash checked. */
export interface AdmittedOperation {
  readonly op: Operation;
  readonly body: unknown;
}

/**
 * The checks of one mutating request, whatever framework carries it: the idempotency headers, the intent time,
 * the body's canonical hash against `X-Arguments-Hash`, a tenant, and the capability for exactly this service,
 * key, arguments, tenant and scope. `body` reads the request's JSON (it throws on anything else). Throws
 * `HttpError`; nothing is written before every check passed.
 */
export async function admitOperation(
  opts: OperationMiddlewareOptions,
  headers: Headers,
  body: () => Promise<unknown>,
): Promise<AdmittedOperation> {
  const parsed = parseMutationHeaders(headers);
  if (!Number.isFinite(parsed.intentAtMs))
    throw new HttpError(400, DownstreamErrorCode.IntentTimeMissing, 'X-Intent-At must be an ISO 8601 time');
  const json: unknown = await body().catch(() => {
    throw new HttpError(400, DownstreamErrorCode.BadRequest, 'the body is not JSON');
  });
  if (canonicalHash(json) !== parsed.argumentsHash)
    throw new HttpError(400, DownstreamErrorCode.ArgumentsHashInvalid, 'X-Arguments-Hash does not match the body');
  const rawTenant = (json as { tenant?: unknown } | null)?.tenant;
  const tenant = typeof rawTenant === 'string' ? rawTenant : '';
  if (!Id.safeParse(tenant).success)
    throw new HttpError(400, DownstreamErrorCode.BadRequest, 'the body names no tenant');
  if (opts.capabilityKeys !== undefined) {
    try {
      verifyCapability(headers.get(CAPABILITY_HEADER) ?? undefined, opts.capabilityKeys, {
        audience: opts.service,
        key: parsed.key,
        argumentsHash: parsed.argumentsHash,
        tenant,
        scope: opts.scope,
        nowMs: Date.now(),
      });
    } catch (err) {
      throw new HttpError(403, DownstreamErrorCode.CapabilityInvalid, (err as Error).message);
    }
  }
  return { op: { ...parsed, tenant, scope: opts.scope }, body: json };
}

/** The middleware of one mutating route; see the module comment. */
export function operationMiddleware(
  ops: PgOperations,
  opts: OperationMiddlewareOptions,
): MiddlewareHandler<OperationEnv> {
  checkCallers(opts);
  return async (c, next) => {
    try {
      const { op, body } = await admitOperation(opts, c.req.raw.headers, () => c.req.json());
      c.set('operationBody', body);
      const plan = opts.faults?.plan(c.req.path);
      c.set('runOperation', async (work) => {
        const context = c as unknown as RequestContext;
        const early = plan && (await runBeforeCommit(plan, context));
        if (early !== undefined) return early;
        const outcome = await ops.withOperation(op, work);
        return (plan && (await runAfterCommit(plan, context))) ?? respond(outcome);
      });
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

/** The body of a seal request. */
export const SealBody = z.strictObject({ tenant: Id });

/**
 * `GET /v1/operations/:key?tenant=T` and `POST /v1/operations/:key/seal` (`{ "tenant": T }`) on the same table
 * `withOperation` writes, answering as the SQLite kit's standard routes do (the contract transport reads both).
 */
export function operationRoutes(ops: PgOperations, opts: CallerCheck): Hono {
  checkCallers(opts);
  return new Hono()
    .get('/v1/operations/:key', (c) => {
      const tenant = c.req.query('tenant') ?? '';
      if (!Id.safeParse(tenant).success)
        return errorJson(400, DownstreamErrorCode.BadRequest, 'tenant is required (?tenant=)');
      return answerLookup(ops, opts, c.req.header(CAPABILITY_HEADER), { key: c.req.param('key'), tenant, seal: false });
    })
    .post('/v1/operations/:key/seal', async (c) => {
      const parsed = SealBody.safeParse(await c.req.json().catch(() => undefined));
      if (!parsed.success) return errorJson(400, DownstreamErrorCode.BadRequest, 'body must be { "tenant": "..." }');
      const ask = { key: c.req.param('key'), tenant: parsed.data.tenant, seal: true };
      return answerLookup(ops, opts, c.req.header(CAPABILITY_HEADER), ask);
    });
}

/** The answer to a lookup (or seal) of `ask.key`, after its capability: the key row, or 404 (sealed or not). */
export async function answerLookup(
  ops: PgOperations,
  opts: CallerCheck,
  capability: string | undefined,
  ask: { readonly key: string; readonly tenant: string; readonly seal: boolean },
): Promise<Response> {
  if (opts.capabilityKeys !== undefined) {
    try {
      verifyLookupCapability(capability, opts.capabilityKeys, { service: opts.service, ...ask });
    } catch (err) {
      return errorJson(403, DownstreamErrorCode.CapabilityInvalid, (err as Error).message);
    }
  }
  const found = await ops.lookup(ask.tenant, ask.key, { seal: ask.seal });
  if (found.kind === 'found') return json(200, found.record);
  const message = found.sealed ? `no effect under ${ask.key}; the key is sealed` : `no record under ${ask.key}`;
  return json(404, { error: DownstreamErrorCode.NotFound, message, sealed: found.sealed });
}
