/**
 * Cross-run rate limits: the activities that ask the tenant's quota workflow (workflows/tenant-quota.workflow.ts)
 * for a slot and give it back. They use the worker's own Temporal client: update-with-start reaches the tenant's
 * one quota workflow, starting it on first use. Without a client they fail closed (`Quota.Unavailable`): a
 * worker that cannot count across runs never lets a limited call through.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowNotFoundError } from '@temporalio/common';
import { Failure } from '../src/domain/failures';
import {
  quotaWorkflowId,
  quotaRequestSchemas,
  type QuotaDecision,
  type ReleaseQuotaInput,
  type ReleaseResult,
  type ReserveQuotaInput,
} from '../src/policy/quota-window';
import { releaseQuotaUpdate, reserveQuotaUpdate, type tenantQuota } from '../workflows/tenant-quota.workflow';

export interface QuotaDeps {
  /** A client of the worker's namespace (same data converter as the worker). */
  readonly client: Client;
  /** Where the quota workflows run: a queue the Ledgerloop workers poll (every worker bundles `tenantQuota`). */
  readonly taskQueue: string;
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

function checkTenant(tenant: unknown): string {
  if (typeof tenant !== 'string' || !TENANT.test(tenant))
    throw ApplicationFailure.nonRetryable('invalid tenant for a quota', Failure.QuotaInvalidRequest);
  return tenant;
}

/** An update the quota workflow refused (validator) or failed stays refused; anything else may pass on retry. */
function mapError(err: unknown): never {
  if (err instanceof ApplicationFailure) throw err;
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure && cause.type === Failure.QuotaInvalidRequest) {
      throw ApplicationFailure.nonRetryable(cause.message, Failure.QuotaInvalidRequest);
    }
    throw unavailable(`the quota workflow failed the update: ${cause?.message ?? err.message}`, false);
  }
  // Connection errors, deadlines, a run closing under continue-as-new: a later attempt can succeed.
  throw unavailable(`the quota workflow did not answer: ${(err as Error).message}`, true);
}

/** The client call, bounded by this attempt's timeout and cancelled with the activity. */
function bounded<R>(client: Client, fn: () => Promise<R>): Promise<R> {
  const ctx = Context.current();
  const budgetMs = ctx.info.startToCloseTimeoutMs > 0 ? ctx.info.startToCloseTimeoutMs : 10_000;
  return client.withAbortSignal(ctx.cancellationSignal, () => client.withDeadline(Date.now() + budgetMs, fn));
}

export function createQuotaActivities(deps: QuotaDeps | undefined) {
  /** A slot in every window named, or none: `{ ok: false, retryAfterMs, scope }` says when to ask again. */
  async function reserveQuota(input: TenantReserveInput): Promise<QuotaDecision> {
    if (!deps) throw unavailable('this worker has no quota client: cross-run rate limits cannot be checked', false);
    const { tenant: rawTenant, ...req } = input;
    const tenant = checkTenant(rawTenant);
    const parsed = quotaRequestSchemas().reserve.safeParse(req);
    if (!parsed.success)
      throw ApplicationFailure.nonRetryable(
        `invalid quota request: ${parsed.error.issues[0]?.message ?? 'malformed'}`,
        Failure.QuotaInvalidRequest,
      );
    const { client, taskQueue } = deps;
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof tenantQuota>('tenantQuota', {
      workflowId: quotaWorkflowId(tenant),
      taskQueue,
      args: [{ tenant }],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      staticSummary: `cross-run rate-limit windows of tenant ${tenant}`,
    });
    try {
      return await bounded(client, () =>
        client.workflow.executeUpdateWithStart(reserveQuotaUpdate, { args: [parsed.data], startWorkflowOperation }),
      );
    } catch (err) {
      return mapError(err);
    }
  }

  /** Give back a reservation whose call was rejected before sending. `released: false` if none was held. */
  async function releaseQuota(input: TenantReleaseInput): Promise<ReleaseResult> {
    if (!deps) throw unavailable('this worker has no quota client: a reservation cannot be released', false);
    const tenant = checkTenant(input.tenant);
    const parsed = quotaRequestSchemas().release.safeParse({ reservationId: input.reservationId });
    if (!parsed.success) throw ApplicationFailure.nonRetryable('invalid reservation id', Failure.QuotaInvalidRequest);
    const { client } = deps;
    try {
      // No start: a tenant without a quota workflow holds no reservation.
      return await bounded(client, () =>
        client.workflow.getHandle(quotaWorkflowId(tenant)).executeUpdate(releaseQuotaUpdate, { args: [parsed.data] }),
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return { released: false };
      return mapError(err);
    }
  }

  return { reserveQuota, releaseQuota };
}
