/**
 * Cross-run rate limits: the activities that take a slot in the tenant's windows and give it back, in the quota
 * store the workers own (src/stores/quota-store.ts: SQLite on one host, PostgreSQL for several). Each is one
 * transaction in the store, idempotent by reservation id; no Temporal workflow holds the windows, so terminating or
 * resetting anything in Temporal cannot empty them. Without a store, or with one that cannot be reached, they fail
 * closed (`Quota.Unavailable`): a worker that cannot count across runs never lets a limited call through.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Failure } from '../src/domain/failures';
import { QuotaStoreUnavailable, type QuotaStore } from '../src/stores/quota-store';
import {
  quotaRequestSchemas,
  type QuotaDecision,
  type ReleaseQuotaInput,
  type ReleaseResult,
  type ReserveQuotaInput,
} from '../src/policy/quota-window';

export interface QuotaDeps {
  /** The store every worker of the deployment shares (`quotaStoreFromEnv`: LEDGERLOOP_QUOTA_URL or _DB). */
  readonly store: QuotaStore;
}

export interface TenantReserveInput extends ReserveQuotaInput {
  readonly tenant: string;
}
export interface TenantReleaseInput extends ReleaseQuotaInput {
  readonly tenant: string;
}

const TENANT = /^[A-Za-z0-9_.:@-]{1,100}$/;

function unavailable(message: string, retryable: boolean): ApplicationFailure {
  return retryable
    ? ApplicationFailure.retryable(message, Failure.QuotaUnavailable)
    : ApplicationFailure.nonRetryable(message, Failure.QuotaUnavailable);
}

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `invalid quota request: ${message}`.slice(0, 500),
    Failure.QuotaInvalidRequest,
  );
}

function checkTenant(tenant: unknown): string {
  if (typeof tenant !== 'string' || !TENANT.test(tenant)) throw invalid('invalid tenant');
  return tenant;
}

/** A store that did not answer may answer the next attempt; anything else it threw is a bug: refuse, typed. */
function mapError(err: unknown): never {
  if (err instanceof QuotaStoreUnavailable) throw unavailable(`the quota store did not answer: ${err.message}`, true);
  throw unavailable(`the quota store failed: ${(err as Error).message}`, true);
}

export function createQuotaActivities(deps: QuotaDeps | undefined) {
  /** A slot in every window named, or none: `{ ok: false, retryAfterMs, scope }` says when to ask again. */
  async function reserveQuota(input: TenantReserveInput): Promise<QuotaDecision> {
    if (!deps) throw unavailable('this worker has no quota store: cross-run rate limits cannot be checked', false);
    const { tenant: rawTenant, ...req } = input;
    const tenant = checkTenant(rawTenant);
    const parsed = quotaRequestSchemas().reserve.safeParse(req);
    if (!parsed.success) throw invalid(parsed.error.issues[0]?.message ?? 'malformed');
    const foreign = parsed.data.scopes.find((s) => s.scope.startsWith('tenant:') && s.scope !== `tenant:${tenant}`);
    if (foreign) throw invalid(`${foreign.scope.slice(0, 120)} is not this quota's tenant (${tenant})`);
    try {
      return await deps.store.reserve(tenant, parsed.data);
    } catch (err) {
      return mapError(err);
    }
  }

  /** Give back a reservation whose call was rejected before sending. `released: false` if none was held. */
  async function releaseQuota(input: TenantReleaseInput): Promise<ReleaseResult> {
    if (!deps) throw unavailable('this worker has no quota store: a reservation cannot be released', false);
    const tenant = checkTenant(input.tenant);
    const parsed = quotaRequestSchemas().release.safeParse({ reservationId: input.reservationId });
    if (!parsed.success) throw invalid('invalid reservation id');
    try {
      return await deps.store.release(tenant, parsed.data.reservationId);
    } catch (err) {
      return mapError(err);
    }
  }

  return { reserveQuota, releaseQuota };
}
