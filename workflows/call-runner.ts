/**
 * One logical call, from a validated proposal to a settled outcome: decide (and record the intent), dispatch,
 * settle. Each dispatch comes back as a typed verdict, and each verdict has one named consequence:
 *
 * | verdict                                   | consequence                                                   |
 * |-------------------------------------------|---------------------------------------------------------------|
 * | answered                                  | settle by the answer                                          |
 * | FAILED (a rejection proving no effect)    | settle FAILED                                                 |
 * | REAUTHORIZE (refused before sending)      | decide again under the same key, at most three times          |
 * | UNKNOWN, only attempt proven to send none | settle FAILED (`proven-unsent`)                               |
 * | UNKNOWN                                   | the retry strategy's choice: reconcile, or (the naive loop) send again / assume failed |
 *
 * Once any attempt may have reached the downstream, only evidence settles the call: a decision alone never ends it
 * FAILED.
 */
import { patched } from '@temporalio/workflow';
import type { Observation } from '../src/domain/activity-contracts';
import type { DeadlineClock } from '../src/domain/activity-presets';
import { Failure, failureMessage } from '../src/domain/failures';
import type { ToolIntent } from '../src/domain/identity';
import { retryFor } from '../src/domain/retry-contract';
import type { RetryStrategy } from '../src/domain/run';
import type { CircuitBreakers } from './circuit-breaker';
import type { Ledger } from './ledger';
import { decide, type DispatchGate } from './steps/decide';
import { dispatch } from './steps/dispatch';
import { assumeFailed, markUnknown, reconcile, settleAnswer, settleUnsent, type CallBase } from './steps/settle';
import type { ValidatedCall } from './steps/validate';

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

/** A validated call with its recorded intent. */
export type ReadyCall = ValidatedCall & { readonly intent: ToolIntent };

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

/** How often a call may be decided again after its decision ran out, or its policy changed, before sending. */
const MAX_REAUTHORIZATIONS = 3;

/** What the run knows about whether this call may have reached the downstream. */
class SendEvidence {
  /** Whether any attempt may have reached the downstream: from then on only evidence settles the call. */
  maySent = false;
  private sent: ReadyCall | undefined;

  constructor(
    private readonly ctx: CallRunnerContext,
    private readonly base: CallBase,
  ) {}

  dispatched(call: ReadyCall): void {
    this.sent = call;
  }

  /** A decision alone cannot settle a call that may have sent: ask the downstream by key (and seal it). */
  settle(why: { code: string; message: string }): Promise<Observation> | undefined {
    return this.maySent && this.sent !== undefined && patched(SETTLE_BY_EVIDENCE)
      ? reconcile(this.ctx, this.sent, this.base, why)
      : undefined;
  }
}

export async function runCall(ctx: CallRunnerContext, validated: ValidatedCall): Promise<Observation> {
  const base: CallBase = {
    logicalCallId: validated.logicalCallId,
    providerCallId: validated.providerCallId,
    toolName: validated.tool.name,
  };
  // The tool's idempotency contract narrows what the run's strategy may do on a retry.
  const retry = retryFor(ctx.strategy, validated.tool.idempotency);
  const evidence = new SendEvidence(ctx, base);
  let reauthorizations = 0;
  let gate = await decide(ctx.gate, validated);
  const firstIntentAt = gate.ok ? gate.intentRecordedAt : undefined;

  for (let n = 1; ; n++) {
    if (!gate.ok) {
      const why = gate.observation.error ?? { code: Failure.AuthorizationDenied, message: 'denied' };
      return (await evidence.settle(why)) ?? gate.observation;
    }
    const call: ReadyCall = { ...validated, intent: gate.intent };
    // Register the offsetting effect before the forward one can exist (once per call).
    if (n === 1) ctx.beforeDispatch?.(validated);
    const sent = await dispatch(ctx, call, gate, n, retry, firstIntentAt);
    evidence.dispatched(call);
    if (sent.kind === 'answered') return settleAnswer(ctx, call, base, sent.response);

    const { verdict, attempts, onlyAttemptSentNothing } = sent.failed;
    switch (verdict.state) {
      case 'FAILED':
        // A contract rejection (other arguments under the key, a sealed key, a business refusal): no effect.
        return settleUnsent(ctx, base, verdict.code, verdict.message, attempts);

      case 'REAUTHORIZE': {
        // The attempt that failed refused before sending; the attempts before it may have sent.
        if (attempts > 1) evidence.maySent = true;
        const why = { code: Failure.AuthorizationExpired, message: verdict.message };
        if (evidence.maySent && !retry.mayResend) {
          const settled = evidence.settle(why);
          if (settled) return await settled;
        }
        if (reauthorizations === MAX_REAUTHORIZATIONS)
          return (await evidence.settle(why)) ?? settleUnsent(ctx, base, why.code, why.message, attempts);
        // Decide again under the current policy, read afresh by the authorizer; the key stays the same.
        reauthorizations += 1;
        ctx.gate.held?.forget();
        gate = await decide(ctx.gate, validated, ctx.gate.held ? gate.approval : undefined);
        break;
      }

      case 'UNKNOWN': {
        if (verdict.cause === 'fence_stale' && !patched(SETTLE_BY_EVIDENCE)) {
          // Runs recorded before the fence was read as "maybe": a stale fence ended the call FAILED.
          const message = failureMessage(sent.failure) ?? Failure.FenceStale;
          return settleUnsent(ctx, base, Failure.FenceStale, message, 0);
        }
        // This call's only attempt, by the attempt number the activity reported, committed nothing.
        if (onlyAttemptSentNothing && !evidence.maySent && n === 1 && patched(PROVEN_UNSENT))
          return settleUnsent(ctx, base, onlyAttemptSentNothing.code, onlyAttemptSentNothing.message, attempts);
        evidence.maySent = true;
        markUnknown(ctx, call, verdict, attempts);
        const then = retry.afterMaybeSent(n);
        if (then === 'assume_failed') return assumeFailed(ctx, base, verdict.cause);
        if (then === 'reconcile') return reconcile(ctx, call, base);
        break; // 'send_again': the naive loop dispatches again under a fresh key
      }
    }
  }
}
