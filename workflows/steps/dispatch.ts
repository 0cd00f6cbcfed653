/**
 * Step 6 of a call, `dispatch`: one send of a recorded intent, under the key its retry strategy names, with
 * attempt timeouts derived from the run deadline before anything is sent (too close to the deadline, nothing is).
 * Temporal owns the retries of the activity. What comes back is typed: an answer from the downstream, or no
 * answer, judged with its attempt evidence (`judgeDispatchFailure`); `settle` turns either into an outcome.
 */
import type { DispatchResponse } from '../../src/domain/activity-contracts';
import { compensationPreset, toolDispatchPreset } from '../../src/domain/activity-presets';
import { judgeDispatchFailure, type FailedDispatch } from '../../src/domain/failures';
import type { CallRetry } from '../../src/domain/retry-contract';
import type { CallRunnerContext, ReadyCall } from '../call-runner';
import { activities } from '../proxies';
import type { GateResult } from './decide';

export type Sent =
  /** The downstream answered: it did the effect (or had it already under the key), or refused it. */
  | { readonly kind: 'answered'; readonly response: DispatchResponse }
  /** No answer: the activity failed, timed out or was cancelled. */
  | { readonly kind: 'no_answer'; readonly failed: FailedDispatch; readonly failure: unknown };

export function keyPrefix(key: string): string {
  return key.slice(0, 14);
}

export async function dispatch(
  ctx: CallRunnerContext,
  call: ReadyCall,
  gate: Extract<GateResult, { ok: true }>,
  n: number,
  retry: CallRetry,
  firstIntentAt: string | undefined,
): Promise<Sent> {
  const { intent } = call;
  const keyUsed = retry.keyFor(intent.operationKey, n);
  const c = ctx.clock();
  const summary = `${call.tool.summary(call.args)} · ${call.logicalCallId} · ${keyPrefix(call.operationKey)}`;
  const options = (call.origin === 'compensation' ? compensationPreset : toolDispatchPreset)(c, summary);
  ctx.ledger.append({
    type: 'ToolAttemptStarted',
    logicalCallId: call.logicalCallId,
    dispatch: n,
    keyUsed,
    service: call.tool.service,
    deadlineRemainingMs: c.deadlineAtMs - c.nowMs,
  });
  try {
    const response = await activities.dispatchTool.executeWithOptions(options, [
      {
        intent,
        service: call.tool.service,
        route: call.tool.route,
        body: call.body,
        strategy: retry.strategy,
        dispatch: n,
        keyUsed,
        ...(gate.capability ? { capability: gate.capability } : {}),
        ...(gate.authorization ? { authorization: gate.authorization } : {}),
        ...(firstIntentAt ? { intentRecordedAt: firstIntentAt } : {}),
        ...(call.tool.idempotency !== 'idempotent_by_key' ? { idempotency: call.tool.idempotency } : {}),
      },
    ]);
    return { kind: 'answered', response };
  } catch (err) {
    return { kind: 'no_answer', failure: err, failed: judgeDispatchFailure(err, options.retry?.maximumAttempts ?? 1) };
  }
}
