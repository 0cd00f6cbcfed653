/**
 * Step 7 of a call, `settle`: every call ends in a state the ledger can defend.
 * - An answer settles it: SUCCEEDED with the result admitted as untrusted data (size, schema, tenant), or FAILED
 *   with a vetted code, never the downstream's text.
 * - No answer makes it UNKNOWN, never FAILED. Reconciliation asks the downstream by key (sealing a missing key)
 *   and settles it by that evidence, or leaves it UNKNOWN for an operator.
 * - FAILED without evidence only when nothing was, or could have been, sent.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { DispatchResponse, Observation } from '../../src/domain/activity-contracts';
import { reconcilePreset } from '../../src/domain/activity-presets';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import { Failure, vetDownstreamFailure, type DispatchVerdict } from '../../src/domain/failures';
import type { CallRunnerContext, ReadyCall } from '../call-runner';
import { activities } from '../proxies';
import { keyPrefix } from './dispatch';

export type CallBase = Omit<Observation, 'state'>;

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

function succeeded(call: ReadyCall, tenant: string, base: CallBase, body: unknown): Observation {
  const admitted = admitResult(call, tenant, body);
  return 'error' in admitted
    ? { ...base, state: 'SUCCEEDED', error: admitted.error }
    : { ...base, state: 'SUCCEEDED', data: admitted.data };
}

/** The downstream answered this dispatch. */
export function settleAnswer(
  ctx: CallRunnerContext,
  call: ReadyCall,
  base: CallBase,
  r: DispatchResponse,
): Observation {
  const { ledger } = ctx;
  const id = call.logicalCallId;
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
      receipt: r.receipt,
      detail: `attempt ${r.attempt} found the effect of an earlier attempt`,
    });
  }
  const common = {
    attempts: r.attempt,
    replayed: r.replayed,
    fence: r.fence,
    workerIdentity: r.workerIdentity,
    queueDelayMs: r.queueDelayMs,
    // Data only (no command): what the ledger keeps of the capability is its digest, kid and jti.
    capability: r.capability,
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
  const outcome = succeeded(call, ctx.tenant, base, r.body);
  ledger.append({
    type: 'ToolResultRecorded',
    logicalCallId: id,
    state: 'SUCCEEDED',
    receipt: r.receipt,
    resultHash: hashCanonical(r.body ?? null),
    errorCode: outcome.error?.code,
    ...common,
  });
  return outcome;
}

/** The call ends FAILED because nothing was, or could have been, sent (a rejection that proves no effect). */
export function settleUnsent(
  ctx: CallRunnerContext,
  base: CallBase,
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

/** No answer: the effect may or may not exist. The call is UNKNOWN until evidence settles it. */
export function markUnknown(
  ctx: CallRunnerContext,
  call: ReadyCall,
  verdict: Extract<DispatchVerdict, { state: 'UNKNOWN' }>,
  attempts: number,
): void {
  ctx.ledger.append({
    type: 'ToolOutcomeMarkedUnknown',
    logicalCallId: call.logicalCallId,
    cause: verdict.cause,
    attempts,
    timeoutClass: verdict.timeoutClass,
  });
  ctx.breakers?.record(call.tool.service, false, verdict.cause);
}

/** The naive loop gives up and calls the call failed with no evidence. This is the bug it demonstrates. */
export function assumeFailed(ctx: CallRunnerContext, base: CallBase, cause: string): Observation {
  ctx.ledger.append({
    type: 'ToolResultRecorded',
    logicalCallId: base.logicalCallId,
    state: 'FAILED',
    errorCode: 'Naive.AssumedFailed',
    attempts: 0,
    replayed: false,
  });
  return { ...base, state: 'FAILED', error: { code: 'Naive.AssumedFailed', message: cause } };
}

/**
 * Settle a call by the downstream's record under its key (sealing a missing key); it runs to its end even when
 * the run is being cancelled. `decided`: the decision that stopped a call that may have sent; a lookup that finds
 * no effect ends the call FAILED with that decision's code.
 */
export function reconcile(
  ctx: CallRunnerContext,
  call: ReadyCall,
  base: CallBase,
  decided?: { code: string; message: string },
): Promise<Observation> {
  return CancellationScope.nonCancellable(() => lookUp(ctx, call, base, decided));
}

async function lookUp(
  ctx: CallRunnerContext,
  call: ReadyCall,
  base: CallBase,
  decided: { code: string; message: string } | undefined,
): Promise<Observation> {
  const { ledger } = ctx;
  const id = call.intent.logicalCallId;
  try {
    const r = await activities.reconcileCall.executeWithOptions(
      reconcilePreset(ctx.clock(), `reconcile ${id} · ${keyPrefix(call.intent.operationKey)}`),
      [{ intent: call.intent, service: call.tool.service, seal: true }],
    );
    if (r.kind === 'found' && r.status === 'completed') {
      ledger.append({
        type: 'ToolEffectReconciled',
        logicalCallId: id,
        via: 'receipt_lookup',
        outcome: 'SUCCEEDED',
        receipt: r.receipt || undefined,
        detail: 'the downstream holds the effect under the operation key',
      });
      return succeeded(call, ctx.tenant, base, r.result);
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
    if (decided !== undefined && ledger.projection.calls[id]?.state !== 'UNKNOWN') {
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
