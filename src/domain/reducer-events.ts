/**
 * What each ledger event does to the projection: one small handler per event type, in `EVENT_HANDLERS`, whose
 * type is a mapped type over the event union, so an event type without a handler (or a handler for a type that
 * does not exist) does not compile. Each handler updates a projection its caller owns, in place (reducer.ts).
 */
import type { CallState, LedgerEvent } from './ledger-events';
import { advances } from './lifecycle';
import type { CallView, DependencyStats, OwnedProjection } from './reducer';

/** The event of type `T` (a member of the union whose `type` is narrowed to `T`). */
export type EventOf<T extends LedgerEvent['type']> = LedgerEvent & { readonly type: T };

/** One handler per event type. */
export type EventHandlers = {
  readonly [T in LedgerEvent['type']]: (d: OwnedProjection, e: EventOf<T>) => void;
};

const NO_STATS: DependencyStats = { logicalCalls: 0, attempts: 0, unknown: 0, failed: 0, queueDelayMs: 0 };

function serviceOf(d: OwnedProjection, callId: string): string | undefined {
  return d.calls[callId]?.service ?? undefined;
}

function account(
  d: OwnedProjection,
  service: string | undefined,
  patch: (s: DependencyStats) => DependencyStats,
): void {
  if (service !== undefined) d.dependencies[service] = patch(d.dependencies[service] ?? NO_STATS);
}

function patchCall(d: OwnedProjection, id: string, patch: Partial<CallView>, event: LedgerEvent): void {
  const current = d.calls[id];
  if (current === undefined) d.violations.push(`#${event.seq} ${event.type} for unknown call ${id}`);
  else d.calls[id] = { ...current, ...patch };
}

/**
 * Move a call to `to` with `patch`. A state that would go back (a settled call dispatched again, a reconciliation
 * of a settled call) is a recorded violation, and the call keeps its state.
 */
function moveCall(d: OwnedProjection, id: string, to: CallState, patch: Partial<CallView>, event: LedgerEvent): void {
  const current = d.calls[id];
  if (current !== undefined && !advances(current.state, to)) {
    d.violations.push(`#${event.seq} ${event.type} would move ${id} from ${current.state} back to ${to}`);
    return patchCall(d, id, patch, event);
  }
  patchCall(d, id, { ...patch, state: to }, event);
}

/**
 * A decision about a call (validation, policy, approval, intent). Before the call's first dispatch it moves the
 * call; after, the call's state is its dispatches' to say, so only the decision's own fields change.
 */
function decided(d: OwnedProjection, id: string, to: CallState, patch: Partial<CallView>, event: LedgerEvent): void {
  if ((d.calls[id]?.dispatches ?? 0) > 0) return patchCall(d, id, patch, event);
  moveCall(d, id, to, patch, event);
}

/**
 * Counts the attempts an event reports for the current dispatch once: an event reports all of them so far, and
 * only those not counted by an earlier event of the same dispatch are added. Returns the call's new count.
 */
function attemptsSeen(d: OwnedProjection, id: string, reported: number): { seen: number; now: number } {
  const seen = d.calls[id]?.attempts ?? 0;
  return { seen, now: Math.max(seen, reported) };
}

/**
 * Whether a reconciliation contradicts the downstream evidence recorded with it: FAILED while the downstream
 * holds the effect, SUCCEEDED without an effect, or a receipt other than the one the downstream holds.
 */
function contradictsEvidence(e: EventOf<'ToolEffectReconciled'>): string | undefined {
  const ev = e.evidence;
  if (ev === undefined) return undefined;
  const holdsEffect = ev.lookup === 'found' && ev.status === 'completed';
  if (e.outcome === 'FAILED' && holdsEffect)
    return `FAILED while ${ev.service} holds the effect under ${ev.operationKey}`;
  // Only a seal proves no effect can appear later: a lookup that found nothing and did not seal settles nothing.
  if (e.outcome === 'FAILED' && ev.lookup === 'not_found')
    return `FAILED while ${ev.service} neither holds nor sealed ${ev.operationKey}`;
  if (e.outcome === 'SUCCEEDED' && !holdsEffect)
    return `SUCCEEDED while ${ev.service} holds no effect under ${ev.operationKey}`;
  if (e.outcome === 'SUCCEEDED' && e.receipt !== undefined && e.receipt !== ev.receipt)
    return `receipt ${e.receipt} is not the one ${ev.service} holds`;
  return undefined;
}

/** A call as its first proposal records it. */
function proposedCall(e: EventOf<'ToolProposalRecorded'>): CallView {
  return {
    logicalCallId: e.logicalCallId,
    toolName: e.toolName,
    providerCallIds: [e.providerCallId],
    turn: e.turn,
    state: 'PROPOSED',
    operationKey: null,
    argumentsHash: null,
    policyVersion: null,
    dispatches: 0,
    attempts: 0,
    receipt: null,
    errorCode: null,
    reconciledVia: null,
    approvedBy: null,
    approval: null,
    reauthorizations: 0,
    intentRecorded: false,
    firstIntentAt: null,
    action: null,
    origin: e.origin,
    compensationCallId: null,
    compensation: null,
    service: null,
  };
}

const nothing = (): void => undefined;

export const EVENT_HANDLERS: EventHandlers = {
  LedgerCarriedForward: nothing,
  RunCreated(d, e) {
    d.runId = e.runId;
    d.principalId = e.principalId;
    d.tenant = e.tenant;
  },
  ModelRequestStarted(d, e) {
    d.turns = Math.max(d.turns, e.turn);
  },
  ModelResponseRecorded(d, e) {
    if (!e.usage) return;
    d.tokens += e.usage.promptTokens + e.usage.completionTokens;
    d.costMicros += e.usage.costMicros;
  },
  ToolProposalRecorded(d, e) {
    const existing = d.calls[e.logicalCallId];
    d.calls[e.logicalCallId] = existing
      ? { ...existing, providerCallIds: [...existing.providerCallIds, e.providerCallId] }
      : proposedCall(e);
  },
  ProposalRejected: (d, e) => decided(d, e.logicalCallId, 'FAILED', { errorCode: e.code }, e),
  ArgumentsCanonicalized: (d, e) =>
    moveCall(d, e.logicalCallId, 'VALIDATED', { operationKey: e.operationKey, argumentsHash: e.argumentsHash }, e),
  AuthorizationAllowed: (d, e) =>
    decided(
      d,
      e.logicalCallId,
      'AUTHORIZED',
      { policyVersion: e.policyVersion, action: d.calls[e.logicalCallId]?.action ?? e.action },
      e,
    ),
  AuthorizationDenied: (d, e) =>
    decided(
      d,
      e.logicalCallId,
      'FAILED',
      { policyVersion: e.policyVersion, errorCode: e.code ?? 'Authorization.Denied' },
      e,
    ),
  ApprovalRequested: (d, e) =>
    decided(d, e.logicalCallId, 'AWAITING_APPROVAL', { policyVersion: e.policyVersion, approval: 'pending' }, e),
  ApprovalGranted: (d, e) =>
    decided(d, e.logicalCallId, 'APPROVED', { approvedBy: e.approver, approval: 'granted' }, e),
  ApprovalDenied: (d, e) =>
    decided(d, e.logicalCallId, 'FAILED', { errorCode: 'Approval.Denied', approval: 'denied' }, e),
  ApprovalWithdrawn: (d, e) => patchCall(d, e.logicalCallId, { approval: 'withdrawn' }, e),
  DispatchDeferred: nothing,
  DispatchIntentRecorded(d, e) {
    const call = d.calls[e.logicalCallId];
    const first = call?.intentRecorded === false;
    const patch = {
      intentRecorded: true,
      policyVersion: e.intent.policyVersion,
      firstIntentAt: call?.firstIntentAt ?? e.at,
    };
    decided(d, e.logicalCallId, 'INTENT_RECORDED', patch, e);
    if (first) d.intents += 1;
  },
  ReauthorizationStarted(d, e) {
    const { seen, now } = attemptsSeen(d, e.logicalCallId, e.attempts);
    const reauthorizations = (d.calls[e.logicalCallId]?.reauthorizations ?? 0) + 1;
    patchCall(d, e.logicalCallId, { reauthorizations, attempts: now }, e);
    account(d, serviceOf(d, e.logicalCallId), (s) => ({ ...s, attempts: s.attempts + Math.max(0, e.attempts - seen) }));
  },
  IntentRepeated(d, e) {
    // The repeat did nothing of its own: it mirrors the earlier call's settled outcome (UNKNOWN leaves it as it is).
    if (e.outcome === 'UNKNOWN') return;
    const patch = {
      receipt: e.receipt ?? null,
      errorCode: e.outcome === 'FAILED' ? 'Intent.Repeated' : null,
      reconciledVia: 'same_intent',
    };
    moveCall(d, e.logicalCallId, e.outcome, patch, e);
  },
  ToolAttemptStarted(d, e) {
    const call = d.calls[e.logicalCallId];
    if (call?.intentRecorded !== true)
      d.violations.push(`#${e.seq} dispatch of ${e.logicalCallId} before DispatchIntentRecorded`);
    // A new dispatch is a new activity: its attempts count from zero (`attempts` is the current dispatch's).
    const patch = { dispatches: (call?.dispatches ?? 0) + 1, attempts: 0, service: e.service ?? call?.service ?? null };
    moveCall(d, e.logicalCallId, 'DISPATCHING', patch, e);
    if (e.dispatch === 1) account(d, e.service, (s) => ({ ...s, logicalCalls: s.logicalCalls + 1 }));
  },
  ToolOutcomeMarkedUnknown(d, e) {
    const { seen, now } = attemptsSeen(d, e.logicalCallId, e.attempts);
    const service = serviceOf(d, e.logicalCallId);
    moveCall(d, e.logicalCallId, 'UNKNOWN', { attempts: now }, e);
    account(d, service, (s) => ({
      ...s,
      attempts: s.attempts + Math.max(0, e.attempts - seen),
      unknown: s.unknown + 1,
    }));
  },
  CircuitOpened(d, e) {
    d.circuits[e.service] = e.until;
  },
  AbsenceAwaited() {
    // The call stays UNKNOWN: only a later lookup (or an operator) settles it.
  },
  ToolEffectReconciled(d, e) {
    const patch = { receipt: e.receipt ?? e.evidence?.receipt ?? null, reconciledVia: e.via };
    moveCall(d, e.logicalCallId, e.outcome, patch, e);
    const contradiction = contradictsEvidence(e);
    if (contradiction !== undefined) d.violations.push(`#${e.seq} ${e.logicalCallId}: ${contradiction}`);
  },
  ToolResultRecorded(d, e) {
    const { seen, now } = attemptsSeen(d, e.logicalCallId, e.attempts);
    const service = serviceOf(d, e.logicalCallId);
    const patch = { attempts: now, receipt: e.receipt ?? null, errorCode: e.errorCode ?? null };
    moveCall(d, e.logicalCallId, e.state, patch, e);
    account(d, service, (s) => ({
      ...s,
      attempts: s.attempts + Math.max(0, e.attempts - seen),
      failed: s.failed + (e.state === 'FAILED' ? 1 : 0),
      queueDelayMs: s.queueDelayMs + (e.queueDelayMs ?? 0),
    }));
  },
  CompensationRegistered: (d, e) => patchCall(d, e.forwardCallId, { compensationCallId: e.compensationCallId }, e),
  CompensationStarted: nothing,
  CompensationCompleted: (d, e) => patchCall(d, e.forwardCallId, { compensation: e.outcome }, e),
  StandingEffectsSettled: nothing,
  CancellationRequested(d) {
    d.cancelRequested = true;
  },
  OperatorWaitStarted(d) {
    d.status = 'waiting_for_operator';
  },
  RunCompleted(d, e) {
    d.status = 'stopped';
    d.stopReason = e.stopReason;
    d.leftStanding = e.leftStanding;
  },
};
