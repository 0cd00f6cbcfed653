/**
 * Step 6 of a call, `dispatch`: one send of a recorded intent, under the key its retry strategy names, with
 * attempt timeouts derived from the run deadline. `prepare` computes everything before anything is sent (too
 * close to the deadline it throws, and nothing is); `send` records the attempt and awaits the activity. Temporal
 * owns the retries of the activity. What comes back is typed: an answer from the downstream, or no answer, judged
 * with its attempt evidence (`judgeDispatchFailure`); `settle` turns either into an outcome.
 */
import type { ActivityOptions } from '@temporalio/workflow';
import type { DispatchRequest, DispatchResponse } from '../../src/domain/activity-contracts';
import { compensationPreset, toolDispatchPreset } from '../../src/domain/activity-presets';
import { judgeDispatchFailure, type FailedDispatch } from '../../src/domain/failures';
import type { CallRetry } from '../../src/domain/recovery';
import { attemptKey } from '../../src/domain/retry-strategies';
import { targetOf } from '../../src/domain/transport';
import type { Allowed, ReadyCall, RunModel } from '../model';
import { activities } from '../proxies';

export type Sent =
  /** The downstream answered: it did the effect (or had it already under the key), or refused it. */
  | { readonly kind: 'answered'; readonly response: DispatchResponse }
  /** No answer: the activity failed, timed out or was cancelled. */
  | { readonly kind: 'no_answer'; readonly failed: FailedDispatch; readonly failure: unknown };

/** A dispatch ready to send: nothing has left the workflow yet. */
export interface Prepared {
  readonly dispatch: number;
  readonly options: ActivityOptions;
  readonly request: DispatchRequest;
  readonly deadlineRemainingMs: number;
}

export function keyPrefix(key: string): string {
  return key.slice(0, 14);
}

/** Everything dispatch `n` of `call` sends, computed before anything is: throws `DeadlineTooClose` when too late. */
export function prepare(run: RunModel, call: ReadyCall, allowed: Allowed, n: number, retry: CallRetry): Prepared {
  const c = run.clock();
  const summary = `${call.tool.summary(call.args)} · ${call.logicalCallId} · ${keyPrefix(call.intent.operationKey)}`;
  const options = (call.origin === 'compensation' ? compensationPreset : toolDispatchPreset)(c, summary);
  return {
    dispatch: n,
    options,
    deadlineRemainingMs: c.deadlineAtMs - c.nowMs,
    request: {
      intent: call.intent,
      service: call.tool.service,
      route: targetOf(call.tool),
      body: call.body,
      strategy: retry.strategy,
      dispatch: n,
      // The recorded intent is the call's one key object; each attempt's key derives from it by one rule.
      keyUsed: attemptKey(retry.strategy, call.intent.operationKey, n),
      authorization: allowed.authorization,
      intentRecordedAt: allowed.intentRecordedAt,
      idempotency: call.tool.idempotency,
    },
  };
}

/** Record the attempt, then send it. From the record on, the call may have reached the downstream. */
export async function send(run: RunModel, call: ReadyCall, p: Prepared): Promise<Sent> {
  run.ledger.append({
    type: 'ToolAttemptStarted',
    logicalCallId: call.logicalCallId,
    dispatch: p.dispatch,
    keyUsed: p.request.keyUsed,
    service: call.tool.service,
    deadlineRemainingMs: p.deadlineRemainingMs,
  });
  try {
    const response = await activities.dispatchTool.executeWithOptions(p.options, [p.request]);
    return { kind: 'answered', response };
  } catch (err) {
    const failed = judgeDispatchFailure(err, p.options.retry?.maximumAttempts ?? 1);
    return { kind: 'no_answer', failure: err, failed };
  }
}
