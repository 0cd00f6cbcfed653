/**
 * Step 7 of a call, `settle`: every call ends in a state the ledger can defend.
 * - An answer settles it: SUCCEEDED with the result admitted as untrusted data (size, schema, tenant), or FAILED
 *   with a vetted code, never the downstream's text.
 * - No answer makes it UNKNOWN, never FAILED. Reconciliation asks the downstream by key (sealing a missing key
 *   where it seals) and settles the call by that evidence, as the recovery table says: SUCCEEDED with the effect
 *   found, FAILED only on a confirmed seal, a retained refusal or a `not_found` after the declared in-flight window,
 *   else UNKNOWN for an operator.
 * - FAILED without a lookup only when nothing was, or could have been, sent.
 */
import { CancellationScope, sleep } from '@temporalio/workflow';
import type {
  DispatchResponse,
  Observation,
  ReconcileRequest,
  ReconcileResponse,
} from '../../src/domain/activity-contracts';
import { reconcilePreset } from '../../src/domain/activity-presets';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import { Failure, vetDownstreamFailure, type DispatchVerdict } from '../../src/domain/failures';
import { isTooDeepMarker, TOO_DEEP_KEY, tooDeep } from '../../src/domain/json-depth';
import type { AbsenceWindow, ResolutionEvidence } from '../../src/domain/ledger-events';
import { afterLookup, reconcileRule } from '../../src/domain/recovery';
import { promisesOf, transportOf, type Promises } from '../../src/domain/transport';
import { callBase, type CallBase, type ReadyCall, type RunModel } from '../model';
import { activities } from '../proxies';
import { keyPrefix } from './dispatch';

/** Validate an untrusted result: size, schema, tenant. Only the promoted fields go on to the model. */
function admitResult(
  call: ReadyCall,
  tenant: string,
  body: unknown,
): { data: Json } | { error: { code: string; message: string } } {
  // First, by a loop: the size check, the schema and the result hash all walk the body by recursion.
  const deep = tooDeep(body, 'result');
  if (deep !== undefined) return { error: { code: Failure.ResultInvalid, message: deep } };
  // The activity replaced an answer nested too deep by its marker (src/downstream/depth-guard.ts): refused the
  // same way, whatever the tool's schema would accept.
  if (isTooDeepMarker(body)) {
    const { limit, at } = body[TOO_DEEP_KEY];
    return {
      error: { code: Failure.ResultInvalid, message: `result nests deeper than ${limit} levels (under ${at})` },
    };
  }
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

function succeeded(call: ReadyCall, tenant: string, body: unknown): Observation {
  const base = callBase(call);
  const admitted = admitResult(call, tenant, body);
  return 'error' in admitted
    ? { ...base, state: 'SUCCEEDED', error: admitted.error }
    : { ...base, state: 'SUCCEEDED', data: admitted.data };
}

/** An attempt that found an earlier attempt's effect (or retained refusal): the call was UNKNOWN, now reconciled. */
function recordRecovered(
  run: RunModel,
  call: ReadyCall,
  r: DispatchResponse,
  via: NonNullable<DispatchResponse['recoveredVia']>,
): void {
  const { ledger } = run;
  const id = call.logicalCallId;
  ledger.append({
    type: 'ToolOutcomeMarkedUnknown',
    logicalCallId: id,
    cause: 'earlier attempt did not report',
    attempts: r.attempt - 1,
  });
  const found = r.outcome === 'succeeded';
  ledger.append({
    type: 'ToolEffectReconciled',
    logicalCallId: id,
    via,
    outcome: found ? 'SUCCEEDED' : 'FAILED',
    receipt: r.receipt,
    detail: `attempt ${r.attempt} found the ${found ? 'effect' : 'retained refusal'} of an earlier attempt`,
    // What the attempt's own lookup found: the effect, or a refusal the downstream retained (no effect).
    evidence: {
      lookup: 'found',
      status: found ? 'completed' : 'failed',
      ...(r.receipt !== undefined ? { receipt: r.receipt } : {}),
      ...(r.errorCode !== undefined ? { errorCode: r.errorCode } : {}),
      service: call.tool.service,
      operationKey: call.intent.operationKey,
      checkedAt: new Date(Date.now()).toISOString(),
    },
  });
}

/** The downstream answered this dispatch. */
export function settleAnswer(run: RunModel, call: ReadyCall, r: DispatchResponse): Observation {
  const { ledger } = run;
  const id = call.logicalCallId;
  if (r.recoveredVia !== undefined) recordRecovered(run, call, r, r.recoveredVia);
  const common = {
    attempts: r.attempt,
    replayed: r.replayed,
    fence: r.fence,
    workerIdentity: r.workerIdentity,
    queueDelayMs: r.queueDelayMs,
    // Data only (no command): what the ledger keeps of the capability is its digest, kid and jti.
    capability: r.capability,
  };
  run.breakers.record(call.tool.service, r.outcome === 'succeeded', r.errorCode ?? 'ok');
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
    return { ...callBase(call), state: 'FAILED', error: vetted };
  }
  const outcome = succeeded(call, run.who.tenant, r.body);
  ledger.append({
    type: 'ToolResultRecorded',
    logicalCallId: id,
    state: 'SUCCEEDED',
    receipt: r.receipt,
    // a body too deep to hash (or its marker) was refused above: the ledger records its refusal code, not a hash
    ...(tooDeep(r.body, 'result') === undefined && !isTooDeepMarker(r.body)
      ? { resultHash: hashCanonical(r.body ?? null) }
      : {}),
    errorCode: outcome.error?.code,
    ...common,
  });
  return outcome;
}

/** The call ends FAILED because nothing was, or could have been, sent (a rejection that proves no effect). */
export function settleUnsent(
  run: RunModel,
  base: CallBase,
  code: string,
  message: string,
  attempts: number,
): Observation {
  run.ledger.append({
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
  run: RunModel,
  call: ReadyCall,
  verdict: Extract<DispatchVerdict, { state: 'UNKNOWN' }>,
  attempts: number,
): void {
  run.ledger.append({
    type: 'ToolOutcomeMarkedUnknown',
    logicalCallId: call.logicalCallId,
    cause: verdict.cause,
    attempts,
    timeoutClass: verdict.timeoutClass,
  });
  run.breakers.record(call.tool.service, false, verdict.cause);
}

/**
 * Settle a call by the downstream's record under its key, by the recovery table (src/domain/recovery.ts); it runs to
 * its end even when the run is being cancelled. SUCCEEDED with the effect found; FAILED on a seal the downstream
 * confirmed, a refusal it retained, or a `not_found` after the declared in-flight window since the last send; an
 * unsealed `not_found` inside that window waits it out and looks again; otherwise the call stays UNKNOWN for an
 * operator. `sentBy`: the latest time any attempt of the call could have sent (workflow time). `why`: the decision
 * or interruption that sent a call that may have sent here, named in the ledger.
 */
export function reconcile(
  run: RunModel,
  call: ReadyCall,
  sentBy: number,
  why?: { readonly code: string; readonly message: string },
): Promise<Observation> {
  return CancellationScope.nonCancellable(() => lookUp(run, call, sentBy, why));
}

/** What a lookup's answer proves, as the ledger records it beside a settlement. */
export function evidenceOf(
  answer: ReconcileResponse,
  service: string,
  operationKey: string,
  window?: AbsenceWindow,
): ResolutionEvidence {
  const base = { service, operationKey, checkedAt: new Date(Date.now()).toISOString() };
  if (answer.kind === 'not_found') {
    if (answer.sealed) return { lookup: 'sealed', ...base };
    return window !== undefined ? { lookup: 'absent', window, ...base } : { lookup: 'not_found', ...base };
  }
  return {
    lookup: 'found',
    status: answer.status,
    ...(answer.receipt !== undefined ? { receipt: answer.receipt } : {}),
    ...(answer.errorCode !== undefined ? { errorCode: answer.errorCode } : {}),
    ...base,
  };
}

/** The window an unsealed `not_found` waits out (or stood on), as the ledger records it. */
function windowOf(promises: Promises, sentBy: number): AbsenceWindow {
  return {
    sentBy: new Date(sentBy).toISOString(),
    maxInFlightMs: promises.maxInFlightMs ?? 0,
    lookupLagMs: promises.lookupLagMs ?? 0,
  };
}

async function lookUp(
  run: RunModel,
  call: ReadyCall,
  sentBy: number,
  why: { readonly code: string; readonly message: string } | undefined,
): Promise<Observation> {
  const { ledger } = run;
  const id = call.intent.logicalCallId;
  const base = callBase(call);
  const service = call.tool.service;
  // A call that leaves its runner mid-flight is UNKNOWN before anyone asks: the lookup decides from there.
  if (ledger.projection.calls[id]?.state !== 'UNKNOWN') {
    ledger.append({
      type: 'ToolOutcomeMarkedUnknown',
      logicalCallId: id,
      cause: why ? `unsettled after ${why.code}` : 'unsettled',
      attempts: 0,
    });
  }
  const unknown = (detail: string): Observation => ({
    ...base,
    state: 'UNKNOWN',
    error: { code: Failure.ReconcileUnreachable, message: `outcome unknown (${detail}); waiting for an operator` },
  });
  const promises = promisesOf(call.tool);
  const rule = reconcileRule(promises);
  if (!rule.lookUp) return unknown(`${service} cannot be asked by key`);
  for (;;) {
    let answer: ReconcileResponse;
    try {
      answer = await activities.reconcileCall.executeWithOptions(
        reconcilePreset(run.clock(), `reconcile ${id} · ${keyPrefix(call.intent.operationKey)}`),
        [lookupRequest(call, rule.seal)],
      );
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      return unknown(cause instanceof Error ? cause.message.slice(0, 200) : 'the lookup failed');
    }
    const verdict = afterLookup(answer, { service, promises, lastSendBoundMs: sentBy, nowMs: Date.now() });
    if (verdict.kind === 'operator') return unknown(verdict.why);
    if (verdict.kind === 'wait') {
      const waited = await waitOutWindow(run, call, verdict.untilMs, windowOf(promises, sentBy));
      if (waited !== undefined) return unknown(waited);
      continue;
    }
    const window =
      verdict.kind === 'failed' && verdict.proof === 'absent_after_window' ? windowOf(promises, sentBy) : undefined;
    return settleByEvidence(run, call, answer, evidenceOf(answer, service, call.intent.operationKey, window), why);
  }
}

/** The reconcile request: a seal only where the downstream seals; the arguments for an HTTP API's search. */
function lookupRequest(call: ReadyCall, seal: boolean): ReconcileRequest {
  return {
    intent: call.intent,
    service: call.tool.service,
    seal,
    retrySeal: seal,
    ...(transportOf(call.tool).kind === 'http' ? { body: call.body } : {}),
  };
}

/**
 * An unsealed `not_found` inside the in-flight window: recorded, then the call waits (a durable timer) until the
 * window has passed and is looked up again. A window that ends after the run's deadline (with its grace) is not
 * waited for: the reason is returned, and the call stays UNKNOWN for an operator.
 */
async function waitOutWindow(
  run: RunModel,
  call: ReadyCall,
  untilMs: number,
  window: AbsenceWindow,
): Promise<string | undefined> {
  const c = run.clock();
  const until = new Date(untilMs).toISOString();
  if (untilMs > c.deadlineAtMs + c.caps.abortGraceMs)
    return `${call.tool.service} found nothing, but absence is proven only at ${until}, after the run's deadline`;
  run.ledger.append({
    type: 'AbsenceAwaited',
    logicalCallId: call.logicalCallId,
    service: call.tool.service,
    until,
    window,
  });
  await sleep(Math.max(1, untilMs - c.nowMs));
  return undefined;
}

/** A lookup's evidence settles the call: the effect found, or no effect (a seal, a retained refusal, the window). */
function settleByEvidence(
  run: RunModel,
  call: ReadyCall,
  answer: ReconcileResponse,
  evidence: ResolutionEvidence,
  why: { readonly code: string; readonly message: string } | undefined,
): Observation {
  const { ledger } = run;
  const id = call.intent.logicalCallId;
  const base = callBase(call);
  if (answer.kind === 'found' && answer.status === 'completed') {
    ledger.append({
      type: 'ToolEffectReconciled',
      logicalCallId: id,
      via: 'receipt_lookup',
      outcome: 'SUCCEEDED',
      receipt: answer.receipt || undefined,
      detail: 'the downstream holds the effect under the operation key',
      evidence,
    });
    return succeeded(call, run.who.tenant, answer.result);
  }
  const refused = answer.kind === 'found' ? vetDownstreamFailure(answer.errorCode, call.tool.service) : undefined;
  const detail = refused
    ? `the downstream recorded a terminal failure ${refused.code}`
    : evidence.lookup === 'absent'
      ? "no effect under the key after the downstream's maximum in-flight time since the last send"
      : 'no effect under the key, and the downstream sealed it';
  ledger.append({
    type: 'ToolEffectReconciled',
    logicalCallId: id,
    via: 'receipt_lookup',
    outcome: 'FAILED',
    detail: why ? `${detail} (after ${why.code})` : detail,
    evidence,
  });
  if (refused) return { ...base, state: 'FAILED', error: refused };
  return { ...base, state: 'FAILED', error: why ?? { code: 'Reconcile.NoEffect', message: detail } };
}
