/**
 * The HTTP side of an idempotent mutating endpoint, shared by every downstream service: header parsing, the
 * recomputed arguments hash, body validation, the two-phase store flow with fault points, and the responses.
 */
import type { Database } from 'better-sqlite3';
import type { z } from 'zod';
import { hashCanonical } from '../src/domain/canonical';
import {
  DownstreamErrorCode,
  HEADER_ARGS_HASH,
  HEADER_FENCE,
  HEADER_INTENT_AT,
  HEADER_KEY,
  HEADER_REPLAYED,
  HEADER_RETAINED_UNTIL,
  type OperationRecord,
} from '../src/downstream/protocol';
import { CAPABILITY_HEADER, verifyCapability } from '../src/capability/capability';
import type { CapabilityKeySet } from '../src/capability/capability-keys';
import { FaultPlan, sleep, type FaultInjector } from './faults';
import {
  dropConnection,
  errorJson,
  HttpError,
  HttpErrorCode,
  json,
  readJsonBody,
  type Handler,
  type RequestContext,
} from './http-kit';
import type { AppliedEffect, BeginResult, CommitResult, IdempotencyStore, PendingOperation } from './idempotency-store';

/** Status and code of a `error_5xx` fault injected after commit: a gateway that lost the real response. */
export const INJECTED_GATEWAY_STATUS = 502;
export const INJECTED_GATEWAY_CODE = 'Downstream.BadGateway';

/** What a service hands to its idempotent routes. */
export interface ServiceRuntime {
  readonly db: Database;
  readonly store: IdempotencyStore;
  /**
   * The fault injector, present only in a lab start (`--admin-port` with `--lab`): a production start has none,
   * and no request can arm one.
   */
  readonly faults?: FaultInjector;
  /** Request body limit in bytes (the public and admin routers'); default 64 KiB (`DEFAULT_BODY_LIMIT_BYTES`). */
  readonly bodyLimitBytes?: number;
  /**
   * The public keys capabilities are verified with, by kid (LEDGERLOOP_CAPABILITY_KEYS), and the record of used
   * token ids. Every mutating, lookup and seal request must carry a capability signed for exactly this service,
   * its key, arguments, tenant and scope, not expired and not used before; anything else is refused with 403.
   * Absent only in a service started with `--insecure-dev` (which then verifies nothing).
   */
  readonly capabilityKeys?: CapabilityKeySet;
  /** This service's name: the audience its capabilities must name. */
  readonly serviceName?: string;
}

/** One idempotent mutating endpoint. */
export interface MutationSpec<B> {
  /** The effect the key protects, e.g. `wallet.charge`. */
  readonly scope: string;
  readonly schema: z.ZodType<B>;
  /**
   * Performs the effect synchronously inside the commit transaction, or throws `BusinessRejection` (retained as
   * the key's failure). It may also throw an `HttpError` for a refusal that must NOT be retained (e.g. 409 while
   * a forward operation it depends on is still in progress): the transaction rolls back, the key stays free.
   * `request` carries the request's headers, e.g. its fence for rows that must record it.
   */
  readonly apply: (db: Database, body: B, key: string, request: MutationHeaders) => AppliedEffect;
  /**
   * A check of the parsed body against the headers before any record exists (e.g. "the key must be the event
   * id"): a message refuses the request with 400 `Request.Invalid`, nothing recorded; undefined lets it pass.
   */
  readonly precondition?: (body: B, request: MutationHeaders) => string | undefined;
  /** Status of a successful (or replayed) response; default 201. */
  readonly successStatus?: number;
}

/** Parsed idempotency headers of a mutating request. */
export interface MutationHeaders {
  readonly key: string;
  readonly argumentsHash: string;
  readonly fence: number;
  /** `X-Intent-At` in epoch ms; NaN when missing or not an ISO 8601 time with a zone (refused, logged). */
  readonly intentAtMs: number;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const HASH_PATTERN = /^[0-9a-f]{64}$/;
/** ISO 8601 date-time with an explicit zone, e.g. `2026-11-30T14:13:50.123Z` or `...+01:00`. */
const INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch ms of an ISO 8601 instant, or NaN for anything else (missing, a bare date, an impossible date). */
export function parseIntentAt(text: string | undefined): number {
  if (text === undefined || !INSTANT_PATTERN.test(text)) return NaN;
  return Date.parse(text);
}

/**
 * Reads `Idempotency-Key`, `X-Arguments-Hash`, `X-Fence` and `X-Intent-At`, or throws a 400 `HttpError`. An
 * unusable intent time is returned as NaN so the handler can log the request before refusing it.
 */
export function parseMutationHeaders(headers: Headers): MutationHeaders {
  const single = (name: string): string | undefined => headers.get(name) ?? undefined;
  const key = single(HEADER_KEY);
  if (key === undefined || !KEY_PATTERN.test(key)) {
    throw new HttpError(400, DownstreamErrorCode.BadRequest, 'Idempotency-Key must be 1-255 visible ASCII characters');
  }
  const argumentsHash = single(HEADER_ARGS_HASH)?.toLowerCase();
  if (argumentsHash === undefined || !HASH_PATTERN.test(argumentsHash)) {
    throw new HttpError(400, DownstreamErrorCode.ArgumentsHashInvalid, 'X-Arguments-Hash must be a hex SHA-256');
  }
  const fenceText = single(HEADER_FENCE);
  const fence = fenceText === undefined ? 0 : /^\d{1,16}$/.test(fenceText) ? Number(fenceText) : NaN;
  if (!Number.isSafeInteger(fence)) {
    throw new HttpError(400, DownstreamErrorCode.BadRequest, 'X-Fence must be an integer >= 0');
  }
  return { key, argumentsHash, fence, intentAtMs: parseIntentAt(single(HEADER_INTENT_AT)) };
}

/** A mutating route's spec with its body type erased, as a service definition lists it (`mutation(spec)`). */
export type Mutation = MutationSpec<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Declare one idempotent mutating route of a service (see `ServiceDefinition.mutations`); keeps `B` checked. */
export function mutation<B>(spec: MutationSpec<B>): Mutation {
  return spec;
}

/** A mutating request that passed every check: its parsed body, its headers and its tenant. */
interface Admitted<B> {
  readonly body: B;
  readonly headers: MutationHeaders;
  readonly tenant: string;
}

/**
 * The checks before any record exists, in order: the intent time, the canonical arguments hash, the body's
 * schema, the spec's precondition (each a 400, counted by code, never stored per request: see
 * `IdempotencyStore.countRefusal`), then the capability (403).
 */
async function admit<B>(c: RequestContext, runtime: ServiceRuntime, spec: MutationSpec<B>): Promise<Admitted<B>> {
  const { store } = runtime;
  const raw = await readJsonBody(c);
  const headers = parseMutationHeaders(c.req.raw.headers);
  const refuse = (code: string, message: string, extra: Record<string, unknown> = {}): never => {
    store.countRefusal(code);
    throw new HttpError(400, code, message, extra);
  };
  // Fail closed: a mutating request that cannot say when its intent was recorded is never admitted.
  if (!Number.isFinite(headers.intentAtMs))
    refuse(
      DownstreamErrorCode.IntentTimeMissing,
      'X-Intent-At must be the ISO 8601 time the intent was recorded (with a zone)',
    );
  const computed = canonicalHash(raw);
  if (computed === undefined) refuse(DownstreamErrorCode.BadRequest, 'request body has no canonical JSON form');
  if (computed !== headers.argumentsHash)
    refuse(DownstreamErrorCode.ArgumentsHashInvalid, `X-Arguments-Hash does not match the body (got ${computed})`);
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
    return refuse(DownstreamErrorCode.BadRequest, 'request body is invalid', { issues });
  }
  const unmet = spec.precondition?.(parsed.data, headers);
  if (unmet !== undefined) refuse(DownstreamErrorCode.BadRequest, unmet);
  const rawTenant = (raw as { tenant?: unknown }).tenant;
  const tenant = typeof rawTenant === 'string' ? rawTenant : '';
  if (runtime.capabilityKeys !== undefined) {
    try {
      verifyCapability(c.req.header(CAPABILITY_HEADER), runtime.capabilityKeys, {
        audience: runtime.serviceName ?? '',
        key: headers.key,
        argumentsHash: headers.argumentsHash,
        tenant,
        scope: spec.scope,
        nowMs: Date.now(),
      });
    } catch (err) {
      store.countRefusal(DownstreamErrorCode.CapabilityInvalid);
      const message = err instanceof Error ? err.message : String(err);
      throw new HttpError(403, DownstreamErrorCode.CapabilityInvalid, message);
    }
  }
  return { body: parsed.data, headers, tenant };
}

/** Builds the handler of an idempotent mutating route: admit, begin, the lab's faults, commit, answer. */
export function mutationHandler<B>(runtime: ServiceRuntime, spec: MutationSpec<B>): Handler {
  const { store } = runtime;
  return async (c) => {
    const { body, headers, tenant } = await admit(c, runtime, spec);
    const plan = runtime.faults?.plan(c.req.path) ?? NO_FAULTS;
    const begun = store.begin({ ...headers, tenant, scope: spec.scope });
    const refused = await runBeforeCommit(plan, c, rollBackOf(store, begun));
    if (refused !== undefined) return refused;
    let outcome: BeginResult | CommitResult = begun;
    if (begun.kind === 'proceed') {
      try {
        outcome = store.commit(begun.pending, (db) => spec.apply(db, body, headers.key, headers));
      } catch (err) {
        // `commit` rolled the transaction back and removed the in-progress record: nothing was committed.
        if (err instanceof HttpError) throw err;
        const message = err instanceof Error ? err.message : String(err);
        throw new HttpError(500, HttpErrorCode.Internal, `effect not committed: ${message}`);
      }
    }
    return (await runAfterCommit(plan, c)) ?? respond(outcome, spec.successStatus ?? 201);
  };
}

const NO_FAULTS = new FaultPlan([]);

/** The SQLite store's roll-back of a request the `before_commit` faults stop: its record aborted, its outcome logged. */
function rollBackOf(store: IdempotencyStore, begun: BeginResult): (outcome: string) => void {
  const pending: PendingOperation | undefined = begun.kind === 'proceed' ? begun.pending : undefined;
  const requestId = begun.kind === 'proceed' ? begun.pending.requestId : begun.requestId;
  return (outcome) => {
    if (pending !== undefined) store.abort(pending, outcome);
    else if (requestId >= 0) store.setOutcome(requestId, outcome);
  };
}

/**
 * Runs the `before_commit` faults; the answer (or the drop) when the request must stop here, after `rollBack`
 * undid what was begun (nothing, for a store that begins inside its commit's transaction).
 */
export async function runBeforeCommit(
  plan: FaultPlan,
  c: RequestContext,
  rollBack: (outcome: string) => void = () => undefined,
): Promise<Response | undefined> {
  for (const fault of plan.at('before_commit')) {
    if (fault.do === 'delay') {
      await sleep(fault.ms);
    } else if (fault.do === 'error_5xx') {
      rollBack('injected_unavailable');
      return errorJson(503, DownstreamErrorCode.Unavailable, `injected fault ${fault.ruleId}: unavailable`);
    } else {
      rollBack('injected_drop_before_commit');
      return dropConnection(c);
    }
  }
  return undefined;
}

/** Runs the `after_commit` faults; the answer that replaces the real one (or the drop), if any. */
export async function runAfterCommit(plan: FaultPlan, c: RequestContext): Promise<Response | undefined> {
  for (const fault of plan.at('after_commit')) {
    if (fault.do === 'delay') {
      await sleep(fault.ms);
    } else if (fault.do === 'error_5xx') {
      // The effect (if any) is committed; like a gateway losing the response, promise nothing about it.
      const message = `injected fault ${fault.ruleId}: bad gateway after commit`;
      return json(INJECTED_GATEWAY_STATUS, { error: INJECTED_GATEWAY_CODE, message });
    } else {
      return dropConnection(c);
    }
  }
  return undefined;
}

function respond(outcome: BeginResult | CommitResult, successStatus: number): Response {
  switch (outcome.kind) {
    case 'proceed':
      throw new Error('unreachable: a proceeding request is always committed before responding');
    case 'lost':
      return errorJson(503, DownstreamErrorCode.Unavailable, 'the idempotency record expired before commit');
    case 'completed':
    case 'replayed':
      return json(successStatus, outcome.record.result ?? null, retainedHeaders(outcome.record, outcome.kind));
    case 'failed':
    case 'retained_failure': {
      const error = outcome.record.error ?? { error: DownstreamErrorCode.Rejected, message: 'rejected' };
      const headers = retainedHeaders(outcome.record, outcome.kind);
      return json(422, { ...error, committed: false }, headers);
    }
    case 'conflict':
      return errorJson(409, outcome.code, outcome.message, {}, retainedHeaders(outcome.record, 'conflict'));
    case 'refused':
      return errorJson(outcome.code === DownstreamErrorCode.IntentExpired ? 409 : 400, outcome.code, outcome.message);
  }
}

function retainedHeaders(record: OperationRecord, kind: string): Record<string, string> {
  const headers: Record<string, string> = { [HEADER_RETAINED_UNTIL]: record.expiresAt };
  if (kind === 'replayed' || kind === 'retained_failure') headers[HEADER_REPLAYED] = 'true';
  return headers;
}

function canonicalHash(value: unknown): string | undefined {
  try {
    return hashCanonical(value);
  } catch {
    return undefined;
  }
}
