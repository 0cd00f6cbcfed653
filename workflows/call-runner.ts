/**
 * One logical call, from a validated proposal to a settled outcome: decide (and record the intent), dispatch,
 * settle. Each dispatch comes back as a typed verdict, and each verdict has one named consequence:
 *
 * | verdict                                    | consequence                                                   |
 * |--------------------------------------------|---------------------------------------------------------------|
 * | answered                                   | settle by the answer                                          |
 * | FAILED (a rejection proving no effect)     | settle FAILED                                                 |
 * | REAUTHORIZE (refused before sending)       | decide again under the same key, at most three times          |
 * | UNKNOWN, the only attempt proven unsent    | settle FAILED                                                 |
 * | UNKNOWN                                    | the strategy's choice: reconcile, for the runtime's two       |
 *
 * Settlement by construction: every way out of `runCall` (a returned verdict, a decision that refuses, a thrown
 * `DeadlineTooClose`, a cancellation, an interrupted approval wait) passes through `leave`, in a scope no
 * cancellation reaches. A call that may have sent leaves SUCCEEDED with its effect found, FAILED on evidence (an
 * answer, a rejection proving no effect, a seal the downstream confirmed), or UNKNOWN for an operator; a call
 * that cannot have sent leaves FAILED with the reason it stopped. No path has to remember to settle. (The one
 * exception is a strategy that settles the call itself, which only the repository's lab installs: its loop
 * records FAILED without evidence, which is the bug it exists to show.)
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { Observation } from '../src/domain/activity-contracts';
import { DeadlineTooClose, type DeadlineClock } from '../src/domain/activity-presets';
import { Failure } from '../src/domain/failures';
import { isSettled } from '../src/domain/lifecycle';
import { retryFor, type CallRetry } from '../src/domain/recovery';
import { callBase, type Allowed, type ReadyCall, type RunModel, type ValidatedCall } from './model';
import { decide } from './steps/decide';
import { prepare, send, type Prepared, type Sent } from './steps/dispatch';
import { markUnknown, reconcile, settleAnswer, settleUnsent } from './steps/settle';

/** How often a call may be decided again after its decision ran out, or its policy changed, before sending. */
const MAX_REAUTHORIZATIONS = 3;

/** What the runner knows about whether the call may have reached the downstream. */
class SendTrack {
  /** Whether any attempt may have reached the downstream: from then on only evidence settles the call. */
  maySent = false;
  /** The last dispatched form of the call (its intent): what a lookup asks by. */
  sent: ReadyCall | undefined;
  private before = false;
  /** The attempt timeout of the latest dispatch: an attempt still running may send until it has passed. */
  private attemptMs = 0;

  /** Dispatch `call` now: from this moment it may reach the downstream. */
  sending(call: ReadyCall, prepared: Prepared): void {
    this.before = this.maySent;
    this.maySent = true;
    this.sent = call;
    this.attemptMs = Number(prepared.options.startToCloseTimeout ?? 0);
  }

  /**
   * The latest time (workflow time) any attempt of the call could have sent: now, plus an attempt timeout for an
   * attempt a worker may still be running after the workflow stopped waiting for it. The recovery table's
   * in-flight window counts from here.
   */
  sentBy(): number {
    return Date.now() + this.attemptMs;
  }

  /** The dispatch just sent proved it sent nothing: the call may have sent only if an earlier dispatch may have. */
  sentNothing(): void {
    this.maySent = this.before;
  }
}

export async function runCall(run: RunModel, validated: ValidatedCall): Promise<Observation> {
  const track = new SendTrack();
  let outcome: Observation | undefined;
  let thrown: { readonly error: unknown } | undefined;
  try {
    outcome = await drive(run, validated, track);
  } catch (error) {
    thrown = { error };
  }
  // Every way out passes here, whatever happened above, and no cancellation interrupts it.
  const left = await CancellationScope.nonCancellable(() => leave(run, validated, track, outcome, thrown?.error));
  if (thrown !== undefined) throw thrown.error;
  return left;
}

async function drive(run: RunModel, validated: ValidatedCall, track: SendTrack): Promise<Observation> {
  // The tool's idempotency contract narrows what the run's strategy may do on a retry.
  const retry = retryFor(run.strategy, validated.tool.idempotency);
  let decision = await decide(run, validated);
  let reauthorizations = 0;
  for (let n = 1; ; n++) {
    if (!decision.ok) return decision.observation;
    const call: ReadyCall = { ...validated, intent: decision.intent };
    const prepared = prepare(run, call, decision, n, retry);
    // Register the offsetting effect before the forward one can exist (once per call).
    if (n === 1) run.registerCompensation(validated);
    track.sending(call, prepared);
    const sent = await send(run, call, prepared);
    if (sent.kind === 'answered') return settleAnswer(run, call, sent.response);
    const next = afterNoAnswer(run, call, sent, n, retry, track);
    if (next !== 'decide_again' && next !== 'send_again') return await next;
    if (next === 'decide_again') {
      if (reauthorizations === MAX_REAUTHORIZATIONS) return refusedAgain(run, call, sent);
      reauthorizations += 1;
      decision = await decideAgain(run, validated, decision, sent);
    }
  }
}

/** The consequence of a dispatch that brought no answer (the table above). */
function afterNoAnswer(
  run: RunModel,
  call: ReadyCall,
  sent: Extract<Sent, { kind: 'no_answer' }>,
  n: number,
  retry: CallRetry,
  track: SendTrack,
): Promise<Observation> | 'decide_again' | 'send_again' {
  const { verdict, attempts, attemptsExact, onlyAttemptSentNothing } = sent.failed;
  const base = callBase(call);
  switch (verdict.state) {
    case 'FAILED':
      // A contract rejection (other arguments under the key, a sealed key, a business refusal): no effect.
      return Promise.resolve(settleUnsent(run, base, verdict.code, verdict.message, attempts));
    case 'REAUTHORIZE':
      // The attempt that failed refused before sending; the attempts before it in this dispatch may have sent. Only
      // an attempt count the activity reported proves there were none before it.
      if (attemptsExact && attempts === 1) track.sentNothing();
      // A tool that may not be sent again settles by lookup rather than by a new decision.
      if (track.maySent && !retry.mayRedispatch)
        return reconcile(run, call, track.sentBy(), reauthorizationCause(sent));
      return 'decide_again';
    case 'UNKNOWN': {
      // This call's only attempt, by the attempt number the activity reported, committed nothing.
      if (onlyAttemptSentNothing && n === 1) {
        track.sentNothing();
        if (!track.maySent) {
          const { code, message } = onlyAttemptSentNothing;
          return Promise.resolve(settleUnsent(run, base, code, message, attempts));
        }
      }
      markUnknown(run, call, verdict, attempts);
      const then = retry.afterMaybeSent({
        dispatch: n,
        call: base,
        cause: verdict.cause,
        record: (event) => run.ledger.append(event),
      });
      if (then === 'reconcile') return reconcile(run, call, track.sentBy());
      if (then === 'send_again') return 'send_again';
      // A strategy that settled the call itself (only one a lab installs): `leave` keeps what it recorded.
      return Promise.resolve(then);
    }
  }
}

function reauthorizationCause(sent: Extract<Sent, { kind: 'no_answer' }>): { code: string; message: string } {
  const message = sent.failed.verdict.state === 'REAUTHORIZE' ? sent.failed.verdict.message : 'decide again';
  return { code: Failure.AuthorizationExpired, message };
}

/**
 * Decide again under the same key, recorded on the call first. The held policy is read afresh (a stale one is why
 * the attempt refused), and the approval the last decision rested on is presented again.
 */
function decideAgain(
  run: RunModel,
  validated: ValidatedCall,
  last: Allowed,
  sent: Extract<Sent, { kind: 'no_answer' }>,
) {
  run.ledger.append({
    type: 'ReauthorizationStarted',
    logicalCallId: validated.logicalCallId,
    cause: reauthorizationCause(sent).message,
    attempts: sent.failed.attempts,
  });
  run.policy.forget();
  return decide(run, validated, last.approval);
}

/** Out of new decisions: the call leaves with the refusal, and `leave` settles it by what may have been sent. */
function refusedAgain(run: RunModel, call: ReadyCall, sent: Extract<Sent, { kind: 'no_answer' }>): Observation {
  const { code, message } = reauthorizationCause(sent);
  return { ...callBase(call), state: 'FAILED', error: { code, message } };
}

/** Why a call left its runner by a throw: a code of the failure family. */
function interruption(error: unknown): { readonly code: string; readonly message: string } {
  if (error instanceof DeadlineTooClose) return { code: Failure.DeadlineTooClose, message: error.message };
  if (isCancellation(error)) return { code: Failure.RunCancelled, message: 'the run was cancelled' };
  return { code: Failure.RunInterrupted, message: error instanceof Error ? error.message : String(error) };
}

/**
 * The one way out of a call. What the call leaves as, by what may have reached the downstream:
 * - nothing may have: its outcome if it has one; else FAILED, with why it stopped (a pending approval withdrawn);
 * - something may have: SUCCEEDED or FAILED on evidence, or UNKNOWN after a lookup; a call that is neither yet (a
 *   decision refused it after a send, a throw interrupted it) is looked up by key and sealed now.
 * A lookup here may use the deadline's grace: settling is what the grace is kept for.
 */
async function leave(
  run: RunModel,
  validated: ValidatedCall,
  track: SendTrack,
  outcome: Observation | undefined,
  thrown: unknown,
): Promise<Observation> {
  const id = validated.logicalCallId;
  const why = outcome?.error ?? (thrown !== undefined ? interruption(thrown) : undefined);
  run.approvals.withdraw(id, why?.message ?? 'the call left its runner');
  const view = run.ledger.projection.calls[id];
  const settledNow = view !== undefined && isSettled(view.state);
  if (!track.maySent || track.sent === undefined) {
    if (settledNow && outcome !== undefined) return outcome;
    const { code, message } = why ?? { code: Failure.RunInterrupted, message: 'the call left unsettled' };
    if (!settledNow) {
      if ((view?.dispatches ?? 0) > 0) settleUnsent(run, callBase(validated), code, message, 0);
      else run.ledger.append({ type: 'ProposalRejected', logicalCallId: id, code, message });
    }
    return outcome ?? { ...callBase(validated), state: 'FAILED', error: { code, message } };
  }
  if (settledNow && outcome !== undefined) return outcome;
  if (view?.state === 'UNKNOWN' && outcome?.state === 'UNKNOWN') return outcome;
  return reconcile(withGrace(run), track.sent, track.sentBy(), why);
}

/** The run, with a clock whose deadline includes the grace a stopping run may use to settle and offset. */
export function withGrace(run: RunModel): RunModel {
  const clock = (): DeadlineClock => {
    const c = run.clock();
    return { ...c, deadlineAtMs: c.deadlineAtMs + c.caps.abortGraceMs };
  };
  return Object.assign(Object.create(run) as RunModel, { clock });
}
