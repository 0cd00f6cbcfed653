/**
 * Step 1 of a dispatch attempt, `beginAttempt`: the attempt's number, fence, key and deadline, and the evidence it
 * reports even if it never returns (a heartbeat), before anything is checked or sent.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DispatchRequest, DispatchResponse } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import { attemptKey, strategyOf, type StrategyDeclaration } from '../../src/domain/retry-strategies';
import type { AnyTool } from '../../src/domain/tool';
import type { Transport } from '../../src/downstream/transport';
import { toolOrFail, transportOrFail, type DispatchContextDeps } from './deps';

/** Fences count milliseconds from here, so that they stay safe integers (2^53) for centuries. */
const FENCE_EPOCH_MS = Date.UTC(2024, 0, 1);

/**
 * The fence of one attempt: an ownership epoch, not a counter. It is the time the Temporal server scheduled this
 * attempt (server clock), in ms since 2024, times 1024, plus the attempt number: a later attempt of any execution
 * of any run (a retry, a new dispatch, continue-as-new, a workflow reset, a reused workflow id) is scheduled later
 * and so outranks every earlier one; the downstream refuses a request whose fence is lower than one it accepted.
 */
export function fenceFor(scheduledAtMs: number, attempt: number): number {
  const since = Math.max(0, Math.floor(scheduledAtMs) - FENCE_EPOCH_MS);
  return since * 1024 + Math.min(Math.max(1, attempt), 1023);
}

/** Nothing is begun in the last part of an attempt's timeout: the server may already have given up on it. */
const DEADLINE_MARGIN = 0.9;

/** One attempt of a dispatch, as every step sees it. */
export interface Attempt {
  readonly req: DispatchRequest;
  readonly n: number;
  readonly fence: number;
  /** The key this attempt sends (the operation key, for the runtime's strategies). */
  readonly key: string;
  readonly tool: AnyTool;
  readonly transport: Transport;
  readonly strategy: StrategyDeclaration;
  /** The attempt's absolute deadline (ms): nothing is begun after it. */
  readonly deadlineAtMs: number;
  /**
   * The time on the later of this worker's clock and the server's (the attempt's scheduled time): what the key's
   * retention is measured on, so a clock behind the server's (or a time-skipping test server) never resends late.
   */
  readonly nowMs: number;
  readonly base: Omit<DispatchResponse, 'outcome' | 'httpStatus' | 'body' | 'replayed'>;
  fail(type: string, message: string, retryable?: boolean, extra?: object): ApplicationFailure;
}

/** A failure of this attempt, carrying its attempt number (and what it sent) so the workflow counts what happened. */
export function attemptFailure(
  type: string,
  message: string,
  retryable: boolean,
  attempt: number,
  extra: object = {},
): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !retryable, details: [{ attempt, ...extra }] });
}

export function beginAttempt(deps: DispatchContextDeps, req: DispatchRequest): Attempt {
  const strategy = strategyOf(req.strategy);
  if (strategy === undefined) {
    throw ApplicationFailure.nonRetryable(
      `strategy ${String(req.strategy).slice(0, 100)} is not one this worker serves (nothing was sent)`,
      Failure.StrategyForbidden,
    );
  }
  const ctx = Context.current();
  const n = ctx.info.attempt;
  const scheduledMs = ctx.info.currentAttemptScheduledTimestampMs;
  const fence = fenceFor(scheduledMs, n);
  // What the last attempt got to is reported even if it never returns (a timeout carries the last heartbeat).
  ctx.heartbeat({ attempt: n });
  // One rule for the key (src/domain/retry-strategies.ts): the operation key itself, under the runtime's strategies.
  const key = attemptKey(req.strategy, req.intent.operationKey, req.dispatch, n);
  const queueDelayMs = Math.max(0, Date.now() - scheduledMs);
  ctx.log.info('dispatch attempt', {
    callId: req.intent.logicalCallId,
    operationKey: req.intent.operationKey,
    keySent: key,
    toolName: req.intent.toolName,
    dispatch: req.dispatch,
  });
  const tool = toolOrFail(deps, req.intent.toolName);
  const startToClose = ctx.info.startToCloseTimeoutMs > 0 ? ctx.info.startToCloseTimeoutMs : 10_000;
  return {
    req,
    n,
    fence,
    key,
    tool,
    transport: transportOrFail(deps, tool, req.service),
    strategy,
    deadlineAtMs: Date.now() + Math.floor(startToClose * DEADLINE_MARGIN),
    nowMs: Math.max(Date.now(), scheduledMs),
    base: { attempt: n, fence, keyUsed: key, workerIdentity: deps.workerIdentity, queueDelayMs },
    fail: (type, message, retryable = false, extra = {}) => attemptFailure(type, message, retryable, n, extra),
  };
}
