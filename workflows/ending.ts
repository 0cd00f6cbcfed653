/**
 * How a run ends once its stop is decided, for whatever hosts the call runner and the saga (`AgentRun` today).
 * Nothing a caller does interrupts it: the failed turn's saga, the settlement of what stands (`onAbort`) and the
 * stop's record run to their end in a scope no cancellation reaches (`toTheEnd`). A cancel that arrives meanwhile
 * (the verified `requestCancel`, or Temporal's own cancel) is recorded as it arrives, and the stop honours it once
 * the saga and the settlement are done: `operator_stopped`, its detail naming the reason the run was stopping for,
 * what its saga offset and what it left.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { Observation } from '../src/domain/activity-contracts';
import type { LeftStanding } from '../src/domain/ledger-events';
import type { ActorRecord } from '../src/domain/verified-identity';
import type { ToolRegistry } from '../src/tools/registry';
import type { Ledger } from './ledger';
import type { ValidatedCall } from './model';
import { settleStanding, type Saga } from './steps/compensate';
import { afterCompensation, afterSettlement, failureSummary, honourCancel, type DecidedStop, type Stop } from './stops';

/** Who asked a verified cancel (from the cancel handler), if anyone did. */
export type CancelledBy = () => { readonly actor: ActorRecord; readonly reason: string } | undefined;

/** What ending a run reads and uses. */
export interface Ending {
  readonly ledger: Ledger;
  readonly saga: Saga;
  readonly tools: ToolRegistry;
  readonly onAbort: 'compensate' | 'leave';
  /** Forward calls whose compensation continue-as-new carried, and this worker's tools no longer know. */
  readonly lost: readonly string[];
  /**
   * The scope a caller's cancel reaches (cancellable): the verified update cancels it, and Temporal's cancel of the
   * workflow reaches it from the root scope.
   */
  readonly scope: CancellationScope;
  readonly cancelledBy: CancelledBy;
  /** One compensation through the call runner, on the clock that includes the deadline's grace. */
  readonly run: (call: ValidatedCall) => Promise<Observation>;
  /** Publish the run's state (search attributes, details). */
  readonly show: () => void;
}

/**
 * Run `work` to its end whatever cancels `watched` meanwhile: it runs in a scope no cancellation reaches. A cancel
 * of `watched` (a cancellable scope) that came before `work` began, or comes while it runs, is passed to `onCancel`
 * once, as soon as it arrives (to record it); `cancelled` says, when the work is done, whether one came (to honour
 * it). A cancel after the work is done is not passed on.
 */
export async function toTheEnd<T>(
  watched: CancellationScope,
  onCancel: () => void,
  work: () => Promise<T>,
): Promise<{ readonly value: T; readonly cancelled: boolean }> {
  let open = true;
  let noted = false;
  const note = (): void => {
    if (!open || noted) return;
    noted = true;
    onCancel();
  };
  if (watched.consideredCancelled) note();
  void watched.cancelRequested.catch(note);
  try {
    const value = await CancellationScope.nonCancellable(work);
    const cancelled = watched.consideredCancelled;
    if (cancelled) note();
    return { value, cancelled };
  } finally {
    open = false;
  }
}

/**
 * End the run by its stop: the failed turn's saga first (a `compensate` stop), then, for every stop but `completed`,
 * what stands is settled by `onAbort` within the deadline's grace; then `RunCompleted`, with what the stop leaves.
 * Returns the stop as recorded.
 */
export async function endRun(e: Ending, s: Stop): Promise<DecidedStop> {
  const { value, cancelled } = await toTheEnd(
    e.scope,
    () => recordCancel(e),
    () => settle(e, s),
  );
  const matched = afterSettlement(value.stop, e.ledger.countIn('UNKNOWN') > 0);
  const stop = cancelled ? honourCancel(matched, e.cancelledBy()) : matched;
  e.ledger.append({ type: 'RunCompleted', stopReason: stop.reason, detail: stop.detail, leftStanding: value.left });
  return stop;
}

async function settle(e: Ending, s: Stop): Promise<{ readonly stop: DecidedStop; readonly left: LeftStanding[] }> {
  let stop: DecidedStop;
  if (s.kind === 'compensate') {
    const outcome = await e.saga.compensate(s.turn, failureSummary(s.failed), e.run);
    e.show();
    stop = afterCompensation(s.failed, outcome, e.ledger.projection);
  } else {
    stop = s;
  }
  if (stop.reason === 'completed') return { stop, left: [] };
  const settled = await settleStanding(e, stop.reason, e.run);
  const detail = [stop.detail, settled.detail].filter((x) => x !== '').join('; ');
  return { stop: { ...stop, detail }, left: [...settled.left] };
}

/**
 * A cancel the run accepted while it was stopping (or just before, unseen by the turn loop): recorded as it
 * arrives. It interrupts nothing; the stop honours it.
 */
function recordCancel(e: Ending): void {
  const p = e.ledger.projection;
  if (p.cancelRequested || p.status === 'stopped') return;
  const by = e.cancelledBy();
  e.ledger.append({
    type: 'CancellationRequested',
    inFlight: [...e.ledger.callsIn('DISPATCHING'), ...e.ledger.callsIn('UNKNOWN')],
    whileStopping: true,
    ...(by ? { requestedBy: by.actor, reason: by.reason } : {}),
  });
}
