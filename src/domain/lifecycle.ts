/**
 * The call lifecycle as an order of phases. A call's phase never decreases: the reducer changes a call's state
 * only forward (`advances`), and a call that has dispatched changes state only by what its dispatches, lookups
 * and an operator establish. Workflow-safe: pure data.
 */
import type { CallState } from './ledger-events';

export const CALL_PHASE: Readonly<Record<CallState, number>> = {
  PROPOSED: 0,
  VALIDATED: 1,
  AWAITING_APPROVAL: 2,
  APPROVED: 2,
  AUTHORIZED: 2,
  INTENT_RECORDED: 3,
  DISPATCHING: 4,
  UNKNOWN: 4,
  SUCCEEDED: 5,
  FAILED: 5,
};

/**
 * Whether a call may move from `from` to `to`: forward, sideways within a phase that is not settled, or to the
 * state it is in (an outcome recorded twice, by the lookup that found it and by the answer that carried it).
 */
export function advances(from: CallState, to: CallState): boolean {
  const a = CALL_PHASE[from];
  const b = CALL_PHASE[to];
  return from === to || b > a || (b === a && a !== CALL_PHASE.SUCCEEDED);
}

/** Settled: the call's outcome is known and final. */
export function isSettled(state: CallState): state is 'SUCCEEDED' | 'FAILED' {
  return CALL_PHASE[state] === CALL_PHASE.SUCCEEDED;
}
