/**
 * The tenant quota: one long-lived workflow per tenant (id `ledgerloop-quota:<tenant>`) that counts dispatches
 * of every run of the tenant in sliding windows per (scope, action), so a rate limit holds across runs: starting
 * more runs does not multiply it. Callers reach it through the `reserveQuota` activity (update-with-start), which
 * gets a synchronous answer; updates to one workflow are applied one at a time, and each answer is durable in
 * history before the caller sees it. Windows run on the workflow's own time (Date.now() here is the workflow-task
 * time). The history is bounded by continue-as-new, which carries the windows.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { Failure } from '../src/domain/failures';
import {
  QuotaWindows,
  quotaRequestSchemas,
  type QuotaDecision,
  type QuotaWindowsSnapshot,
  type ReleaseQuotaInput,
  type ReleaseResult,
  type ReserveQuotaInput,
} from '../src/policy/quota-window';

export interface TenantQuotaInput {
  readonly tenant: string;
  /** The windows of the previous run (continue-as-new). */
  readonly carried?: QuotaWindowsSnapshot;
  /** Continue as new after this many updates, or when the server suggests it; default 500 (~2,500 events). */
  readonly continueAfterUpdates?: number;
}

export interface TenantQuotaView {
  readonly tenant: string;
  readonly windows: readonly { readonly scope: string; readonly action: string; readonly inWindow: number }[];
  /** Admitted reservations still remembered (a repeat of one answers ok without counting). */
  readonly heldReservations: number;
  /** Updates handled by this run of the workflow (the count restarts at each continue-as-new). */
  readonly updatesThisRun: number;
}

/** Reserve a slot in every named window, or in none. Idempotent by `reservationId`. */
export const reserveQuotaUpdate = defineUpdate<QuotaDecision, [ReserveQuotaInput]>('reserveQuota');
/** Give back a reservation whose call was never sent. */
export const releaseQuotaUpdate = defineUpdate<ReleaseResult, [ReleaseQuotaInput]>('releaseQuota');
export const quotaStateQuery = defineQuery<TenantQuotaView>('quotaState');

export const DEFAULT_CONTINUE_AFTER_UPDATES = 500;

export async function tenantQuota(input: TenantQuotaInput): Promise<void> {
  const quota = new TenantQuota(input);
  setHandler(reserveQuotaUpdate, (req) => quota.reserve(req), { validator: (req) => quota.validateReserve(req) });
  setHandler(releaseQuotaUpdate, (req) => quota.release(req), { validator: (req) => quota.validateRelease(req) });
  setHandler(quotaStateQuery, () => quota.view());

  await condition(() => quota.shouldContinueAsNew());
  await condition(allHandlersFinished);
  await continueAsNew<typeof tenantQuota>({ ...input, carried: quota.snapshot() });
}

/** The workflow's state and rules: handlers above only route to it. */
class TenantQuota {
  private readonly windows: QuotaWindows;
  private updates = 0;
  private readonly continueAfter: number;

  constructor(private readonly input: TenantQuotaInput) {
    this.windows = new QuotaWindows(input.carried);
    this.continueAfter = input.continueAfterUpdates ?? DEFAULT_CONTINUE_AFTER_UPDATES;
  }

  /** Rejected updates never reach history: a malformed request cannot fail a workflow task or grow the state. */
  validateReserve(req: unknown): void {
    const parsed = quotaRequestSchemas().reserve.safeParse(req);
    if (!parsed.success) throw invalid(parsed.error.issues);
    const foreign = parsed.data.scopes.find(
      (s) => s.scope.startsWith('tenant:') && s.scope !== `tenant:${this.input.tenant}`,
    );
    if (foreign)
      throw ApplicationFailure.nonRetryable(
        `${foreign.scope} is not this quota's tenant (${this.input.tenant})`,
        Failure.QuotaInvalidRequest,
      );
  }

  validateRelease(req: unknown): void {
    const parsed = quotaRequestSchemas().release.safeParse(req);
    if (!parsed.success) throw invalid(parsed.error.issues);
  }

  reserve(req: ReserveQuotaInput): QuotaDecision {
    return this.handle(() => this.windows.reserve(req, Date.now()));
  }

  release(req: ReleaseQuotaInput): ReleaseResult {
    return this.handle(() => this.windows.release(req.reservationId, Date.now()));
  }

  view(): TenantQuotaView {
    const now = Date.now();
    return {
      tenant: this.input.tenant,
      windows: this.windows.usage(now),
      heldReservations: this.windows.heldCount,
      updatesThisRun: this.updates,
    };
  }

  shouldContinueAsNew(): boolean {
    return this.updates >= this.continueAfter || workflowInfo().continueAsNewSuggested;
  }

  snapshot(): QuotaWindowsSnapshot {
    this.windows.prune(Date.now());
    return this.windows.snapshot();
  }

  /** A bug in the window logic fails this update, never the workflow task (which would stall every caller). */
  private handle<T>(fn: () => T): T {
    this.updates += 1;
    try {
      return fn();
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      throw ApplicationFailure.nonRetryable(`quota update failed: ${(err as Error).message}`, Failure.QuotaUnavailable);
    }
  }
}

function invalid(
  issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[],
): ApplicationFailure {
  const text = issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(input)'}: ${i.message}`)
    .join('; ');
  return ApplicationFailure.nonRetryable(`invalid quota request: ${text}`.slice(0, 500), Failure.QuotaInvalidRequest);
}
