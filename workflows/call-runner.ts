/**
 * Runs one logical call: dispatch under its key, then settle the outcome. A timeout or a lost response makes
 * the call UNKNOWN, never FAILED; reconciliation asks the downstream by key and settles it, or leaves it
 * UNKNOWN for an operator.
 */
import { CancellationScope, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  compensationPreset,
  reconcilePreset,
  toolDispatchPreset,
  type DeadlineClock,
} from '../src/domain/activity-presets';
import type { Observation } from '../src/domain/activity-contracts';
import { hashCanonical, type Json } from '../src/domain/canonical';
import {
  attemptsOf,
  classifyDispatchFailure,
  Failure,
  vetDownstreamFailure,
  type FailureLike,
} from '../src/domain/failures';
import { retryFor } from '../src/domain/retry-contract';
import { blindRetryKey, type ToolIntent } from '../src/domain/identity';
import type { RetryStrategy } from '../src/domain/run';
import { authorizeForDispatch, type DispatchGate } from './authorize';
import type { CircuitBreakers } from './circuit-breaker';
import type { Ledger } from './ledger';
import type { ValidatedCall } from './proposals';

export interface CallRunnerContext {
  readonly ledger: Ledger;
  readonly strategy: RetryStrategy;
  readonly tenant: string;
  readonly clock: () => DeadlineClock;
  readonly gate: DispatchGate;
  /** Called once per call after its intent is recorded and before its first dispatch (saga registration). */
  readonly beforeDispatch?: (call: ValidatedCall) => void;
  readonly breakers?: CircuitBreakers;
}

type ReadyCall = ValidatedCall & { readonly intent: ToolIntent };

function keyPrefix(key: string): string {
  return key.slice(0, 14);
}

/** Validate an untrusted result: size, schema, tenant. Only the promoted fields go on to the model. */
function admitResult(
  call: ReadyCall,
  tenant: string,
  body: unknown,
): { data: Json } | { error: { code: string; message: string } } {
  const text = JSON.stringify(body ?? null);
  if (text.length > call.tool.maxResultBytes) {
    return { error: { code: Failure.ResultInvalid, message: `result exceeds ${call.tool.maxResultBytes} bytes` } };
  }
  const parsed = call.tool.result.safeParse(body);
  if (!parsed.success)
    return { error: { code: Failure.ResultInvalid, message: 'result does not match the tool result schema' } };
  const resultTenant = (parsed.data as { tenant?: unknown }).tenant;
  if (resultTenant !== undefined && resultTenant !== tenant) {
    return { error: { code: Failure.ResultInvalid, message: 'result names another tenant' } };
  }
  return { data: call.tool.promote(parsed.data) };
}

/**
 * Patch id: once any attempt of a call may have reached the downstream, the call ends SUCCEEDED (the effect found
 * by key), FAILED only after a lookup that found no effect and sealed the key, or UNKNOWN for an operator; never
 * FAILED on a decision alone (a denied re-approval, an exhausted re-authorization, a stale fence).
 */
export const SETTLE_BY_EVIDENCE = 'settle-by-evidence';

/**
 * Versioned change: a call whose only attempt was refused before anything could commit (the downstream refused
 * its capability, or the signer refused to sign) ends FAILED, since no attempt of it may have sent. Runs before
 * this change reconciled such a call; a worker without a signing key cannot (fail-closed services refuse its
 * lookups too), so the call would wait for an operator with nothing to settle.
 */
export const PROVEN_UNSENT = 'proven-unsent';

/** UNKNOWN causes that prove the failing attempt committed nothing (an earlier attempt may have). */
const ATTEMPT_DID_NOTHING: ReadonlySet<string> = new Set(['capability_rejected', 'capability_claims_mismatch']);

/** The failure a call records and returns when nothing was, or could have been, sent. */
function failedWithoutSend(
  ctx: CallRunnerContext,
  base: Omit<Observation, 'state'>,
  code: string,
  message: string,
  attempts: number,
): Observation {
  ctx.ledger.append({
    type: 'ToolResultRecorded',
    logicalCallId: base.logicalCallId,
    state: 'FAILED',
    errorCode: code,
    attempts,
    replayed: false,
  });
  return { ...base, state: 'FAILED', error: { code, message } };
}

/** Authorize at dispatch, dispatch under the operation key, settle the outcome. */
export async function runCall(ctx: CallRunnerContext, validated: ValidatedCall): Promise<Observation> {
  const { ledger } = ctx;
  const id = validated.logicalCallId;
  const base = { logicalCallId: id, providerCallId: validated.providerCallId, toolName: validated.tool.name };
  const summary = `${validated.tool.summary(validated.args)} · ${id} · ${keyPrefix(validated.operationKey)}`;
  // The tool's idempotency contract narrows what the run's strategy may do on a retry.
  const retry = retryFor(ctx.strategy, validated.tool.idempotency);
  const strategy = retry.strategy;
  const maxDispatches = strategy === 'blind_retry' ? 2 : 1;
  let reauthorizations = 0;
  /** Whether any attempt of this call may have reached the downstream: from then on only evidence settles it. */
  let maySent = false;
  let sentIntent: ToolIntent | undefined;
  /** A decision alone cannot settle a call that may have sent: ask the downstream by key (and seal it). */
  const settleByEvidence = (why: { code: string; message: string }): Promise<Observation> | undefined =>
    maySent && sentIntent !== undefined && patched(SETTLE_BY_EVIDENCE)
      ? CancellationScope.nonCancellable(() => reconcile(ctx, { ...validated, intent: sentIntent! }, base, why))
      : undefined;

  let gate = await authorizeForDispatch(ctx.gate, validated);
  const firstIntentAt = gate.ok ? gate.intentRecordedAt : undefined;
  for (let dispatch = 1; ; dispatch++) {
    if (!gate.ok)
      return (
        (await settleByEvidence(gate.observation.error ?? { code: Failure.AuthorizationDenied, message: 'denied' })) ??
        gate.observation
      );
    const intent = gate.intent;
    const approvalUsed = gate.approval;
    const call: ReadyCall = { ...validated, intent };
    // Register the offsetting effect before the forward one can exist (once per call).
    if (dispatch === 1) ctx.beforeDispatch?.(validated);
    const keyUsed = strategy === 'blind_retry' ? blindRetryKey(intent.operationKey, dispatch) : intent.operationKey;
    const c = ctx.clock();
    // Derive the attempt timeouts before anything is sent: too close to the deadline, nothing is dispatched.
    const preset = validated.origin === 'compensation' ? compensationPreset : toolDispatchPreset;
    const options = preset(c, summary);
    const maximumAttempts = options.retry?.maximumAttempts ?? 1;
    ledger.append({
      type: 'ToolAttemptStarted',
      logicalCallId: id,
      dispatch,
      keyUsed,
      service: call.tool.service,
      deadlineRemainingMs: c.deadlineAtMs - c.nowMs,
    });
    sentIntent = intent;
    try {
      const { dispatchTool } = proxyActivities<Activities>(options);
      const r = await dispatchTool({
        intent,
        service: call.tool.service,
        route: call.tool.route,
        body: call.body,
        strategy,
        dispatch,
        keyUsed,
        ...(gate.capability ? { capability: gate.capability } : {}),
        ...(gate.authorization ? { authorization: gate.authorization } : {}),
        ...(firstIntentAt ? { intentRecordedAt: firstIntentAt } : {}),
        ...(call.tool.idempotency !== 'idempotent_by_key' ? { idempotency: call.tool.idempotency } : {}),
      });
      if (r.recoveredVia !== undefined) {
        ledger.append({
          type: 'ToolOutcomeMarkedUnknown',
          logicalCallId: id,
          cause: 'earlier attempt did not report',
          attempts: r.attempt - 1,
        });
        ledger.append({
          type: 'ToolEffectReconciled',
          logicalCallId: id,
          via: r.recoveredVia,
          outcome: r.outcome === 'succeeded' ? 'SUCCEEDED' : 'FAILED',
          ...(r.receipt !== undefined ? { receipt: r.receipt } : {}),
          detail: `attempt ${r.attempt} found the effect of an earlier attempt`,
        });
      }
      const common = {
        attempts: r.attempt,
        replayed: r.replayed,
        fence: r.fence,
        workerIdentity: r.workerIdentity,
        ...(r.queueDelayMs !== undefined ? { queueDelayMs: r.queueDelayMs } : {}),
        // Data only (no command): what the ledger keeps of the capability is its digest, kid and jti.
        ...(r.capability !== undefined ? { capability: r.capability } : {}),
      };
      ctx.breakers?.record(call.tool.service, r.outcome === 'succeeded', r.errorCode ?? 'ok');
      if (r.outcome === 'rejected') {
        // Downstream failure text is untrusted: a vetted code and a message written here.
        const vetted = vetDownstreamFailure(r.errorCode, call.tool.service);
        ledger.append({
          type: 'ToolResultRecorded',
          logicalCallId: id,
          state: 'FAILED',
          errorCode: vetted.code,
          ...common,
        });
        return { ...base, state: 'FAILED', error: vetted };
      }
      const admitted = admitResult(call, ctx.tenant, r.body);
      ledger.append({
        type: 'ToolResultRecorded',
        logicalCallId: id,
        state: 'SUCCEEDED',
        ...(r.receipt !== undefined ? { receipt: r.receipt } : {}),
        resultHash: hashCanonical(r.body ?? null),
        ...('error' in admitted ? { errorCode: admitted.error.code } : {}),
        ...common,
      });
      return 'error' in admitted
        ? { ...base, state: 'SUCCEEDED', error: admitted.error }
        : { ...base, state: 'SUCCEEDED', data: admitted.data };
    } catch (err) {
      const failure = err as FailureLike;
      const verdict = classifyDispatchFailure(failure);
      const { attempts } = attemptsOf(failure, maximumAttempts);
      if (verdict.state === 'REAUTHORIZE') {
        // The attempt that failed refused before sending; the attempts before it may have sent.
        if (attempts > 1) maySent = true;
        const why = { code: Failure.AuthorizationExpired, message: verdict.message };
        if (maySent && !retry.mayResend) {
          const settled = settleByEvidence(why);
          if (settled) return await settled;
        }
        if (reauthorizations < 3) {
          // The decision ran out, or the policy changed, before the send: decide again under the current
          // policy, read afresh by the authorizer; the key stays the same.
          reauthorizations += 1;
          ctx.gate.held?.forget();
          gate = await authorizeForDispatch(ctx.gate, validated, ctx.gate.held ? approvalUsed : undefined);
          continue;
        }
        return (await settleByEvidence(why)) ?? failedWithoutSend(ctx, base, why.code, why.message, attempts);
      }
      if (verdict.state === 'FAILED') {
        // A contract rejection (other arguments under the key, a sealed key, a business refusal): no effect.
        return failedWithoutSend(ctx, base, verdict.code, verdict.message, attempts);
      }
      if (verdict.cause === 'fence_stale' && !patched(SETTLE_BY_EVIDENCE)) {
        // Runs recorded before the fence was read as "maybe": a stale fence ended the call FAILED.
        return failedWithoutSend(ctx, base, Failure.FenceStale, failure.cause?.message ?? Failure.FenceStale, 0);
      }
      if (!maySent && dispatch === 1 && ATTEMPT_DID_NOTHING.has(verdict.cause)) {
        // Did this call's only attempt do nothing? Only the attempt number the activity reported can say so.
        const reported = attemptsOf(failure, maximumAttempts);
        if (reported.exact && reported.attempts === 1 && patched(PROVEN_UNSENT)) {
          return failedWithoutSend(
            ctx,
            base,
            failure.cause?.type ?? verdict.cause,
            failure.cause?.message ?? verdict.cause,
            reported.attempts,
          );
        }
      }
      maySent = true;
      ledger.append({
        type: 'ToolOutcomeMarkedUnknown',
        logicalCallId: id,
        cause: verdict.cause,
        attempts,
        ...(verdict.timeoutClass ? { timeoutClass: verdict.timeoutClass } : {}),
      });
      ctx.breakers?.record(call.tool.service, false, verdict.cause);
      if (strategy === 'blind_retry') {
        // The naive loop: dispatch again under a fresh key, then give up and call it failed. This is the bug.
        if (dispatch < maxDispatches) continue;
        ledger.append({
          type: 'ToolResultRecorded',
          logicalCallId: id,
          state: 'FAILED',
          errorCode: 'Naive.AssumedFailed',
          attempts: 0,
          replayed: false,
        });
        return { ...base, state: 'FAILED', error: { code: 'Naive.AssumedFailed', message: verdict.cause } };
      }
      // Reconciliation runs to its end even when the run is being cancelled.
      return CancellationScope.nonCancellable(() => reconcile(ctx, call, base));
    }
  }
}

/**
 * Settle a call by the downstream's record under its key (sealing a missing key). `decided`: the decision that
 * stopped a call that may have sent; a lookup that finds no effect ends the call FAILED with that decision's code.
 */
async function reconcile(
  ctx: CallRunnerContext,
  call: ReadyCall,
  base: Omit<Observation, 'state'>,
  decided?: { code: string; message: string },
): Promise<Observation> {
  const { ledger } = ctx;
  const id = call.intent.logicalCallId;
  try {
    const { reconcileCall } = proxyActivities<Activities>(
      reconcilePreset(ctx.clock(), `reconcile ${id} · ${keyPrefix(call.intent.operationKey)}`),
    );
    const r = await reconcileCall({ intent: call.intent, service: call.tool.service, seal: true });
    if (r.kind === 'found' && r.status === 'completed') {
      ledger.append({
        type: 'ToolEffectReconciled',
        logicalCallId: id,
        via: 'receipt_lookup',
        outcome: 'SUCCEEDED',
        ...(r.receipt ? { receipt: r.receipt } : {}),
        detail: 'the downstream holds the effect under the operation key',
      });
      const admitted = admitResult(call, ctx.tenant, r.result);
      return 'error' in admitted
        ? { ...base, state: 'SUCCEEDED', error: admitted.error }
        : { ...base, state: 'SUCCEEDED', data: admitted.data };
    }
    const refused = r.kind === 'found' ? vetDownstreamFailure(r.errorCode, call.tool.service) : undefined;
    const detail = refused
      ? `the downstream recorded a terminal failure ${refused.code}`
      : 'no effect under the key; the key is now sealed';
    ledger.append({
      type: 'ToolEffectReconciled',
      logicalCallId: id,
      via: 'receipt_lookup',
      outcome: 'FAILED',
      detail: decided ? `${detail} (after ${decided.code})` : detail,
    });
    if (refused) return { ...base, state: 'FAILED', error: refused };
    return { ...base, state: 'FAILED', error: decided ?? { code: 'Reconcile.NoEffect', message: detail } };
  } catch {
    // Reconciliation could not establish the outcome: the call stays UNKNOWN and an operator must settle it.
    if (decided !== undefined && ctx.ledger.projection.calls[id]?.state !== 'UNKNOWN') {
      ledger.append({
        type: 'ToolOutcomeMarkedUnknown',
        logicalCallId: id,
        cause: `unsettled after ${decided.code}`,
        attempts: 0,
      });
    }
    return {
      ...base,
      state: 'UNKNOWN',
      error: { code: Failure.ReconcileUnreachable, message: 'outcome unknown; waiting for an operator' },
    };
  }
}
