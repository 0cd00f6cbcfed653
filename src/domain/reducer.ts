/**
 * The pure, versioned reducer. `reduce(events, version)` rebuilds the projection; `projectionHash` hashes it.
 * Invariants, each a recorded violation when broken: replay of the same events with the same reducer version
 * gives the same hash; a dispatch (ToolAttemptStarted) needs an earlier DispatchIntentRecorded for its call; a
 * call's state only moves forward (src/domain/lifecycle.ts), and once a call has dispatched, only its dispatches,
 * lookups and an operator move it (a decision taken again is recorded on it and leaves its state alone).
 */
import { hashCanonical } from './canonical';
import type { CallState, LedgerEvent, LeftStanding } from './ledger-events';
import { advances } from './lifecycle';
import type { StopReason } from './run';

export const REDUCER_VERSION = 1;

export interface CallView {
  readonly logicalCallId: string;
  readonly toolName: string;
  readonly providerCallIds: readonly string[];
  readonly turn: number;
  readonly state: CallState;
  readonly operationKey: string | null;
  readonly argumentsHash: string | null;
  readonly policyVersion: string | null;
  readonly dispatches: number;
  readonly attempts: number;
  readonly receipt: string | null;
  readonly errorCode: string | null;
  readonly reconciledVia: string | null;
  readonly approvedBy: string | null;
  /** The call's latest approval request: waiting for a human, decided, or withdrawn (null: none asked). */
  readonly approval: 'pending' | 'granted' | 'denied' | 'withdrawn' | null;
  /** Decisions taken again after the call had dispatched (its capability lapsed or its policy changed). */
  readonly reauthorizations: number;
  readonly intentRecorded: boolean;
  /** When the call's intent was first recorded (workflow time): it counts in its action's rate-limit windows. */
  readonly firstIntentAt: string | null;
  /** The policy action the call was authorized as (`wallet.debit`), for the rate-limit windows. */
  readonly action: string | null;
  readonly origin: 'model' | 'compensation';
  readonly compensationCallId: string | null;
  readonly compensation: 'OFFSET' | 'NOTHING_TO_OFFSET' | 'FAILED' | 'UNKNOWN' | null;
  readonly service: string | null;
}

export interface Projection {
  readonly reducerVersion: number;
  readonly runId: string | null;
  readonly principalId: string | null;
  readonly tenant: string | null;
  readonly status: 'running' | 'waiting_for_operator' | 'stopped';
  readonly stopReason: StopReason | null;
  readonly turns: number;
  readonly intents: number;
  readonly calls: Readonly<Record<string, CallView>>;
  readonly violations: readonly string[];
  readonly cancelRequested: boolean;
  /** What the run's stop left standing (RunCompleted), for an operator. */
  readonly leftStanding: readonly LeftStanding[];
  readonly tokens: number;
  readonly costMicros: number;
  /** Retry accounting per dependency: logical calls, attempts, and outcomes that were not a success. */
  readonly dependencies: Readonly<Record<string, DependencyStats>>;
  /** Open circuit breakers: service -> until (workflow time). */
  readonly circuits: Readonly<Record<string, string>>;
}

export interface DependencyStats {
  readonly logicalCalls: number;
  readonly attempts: number;
  readonly unknown: number;
  readonly failed: number;
  readonly queueDelayMs: number;
}

const NO_STATS: DependencyStats = { logicalCalls: 0, attempts: 0, unknown: 0, failed: 0, queueDelayMs: 0 };

function serviceOf(p: Projection, callId: string): string | undefined {
  return p.calls[callId]?.service ?? undefined;
}

/**
 * A projection its holder owns: the same shape, with containers that `applyOwned` updates in place. A call's
 * view is never changed in place (an update replaces it), so a `CallView` read earlier stays as it was.
 */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type OwnedProjection = Mutable<Omit<Projection, 'calls' | 'violations' | 'dependencies' | 'circuits'>> & {
  readonly calls: Record<string, CallView>;
  readonly violations: string[];
  readonly dependencies: Record<string, DependencyStats>;
  readonly circuits: Record<string, string>;
};

/** A copy of `p` that shares no container with it: the one O(calls) step, taken once per owner. */
export function ownedProjection(p: Projection): OwnedProjection {
  return {
    ...p,
    calls: { ...p.calls },
    violations: [...p.violations],
    dependencies: { ...p.dependencies },
    circuits: { ...p.circuits },
  };
}

function account(
  d: OwnedProjection,
  service: string | undefined,
  patch: (s: DependencyStats) => DependencyStats,
): void {
  if (service !== undefined) d.dependencies[service] = patch(d.dependencies[service] ?? NO_STATS);
}

/** attempts / logical calls per dependency: 1.0 means no retries. */
export function retryAmplification(p: Projection): Record<string, number> {
  return Object.fromEntries(
    Object.entries(p.dependencies).map(([s, d]) => [s, d.logicalCalls === 0 ? 0 : d.attempts / d.logicalCalls]),
  );
}

export class UnsupportedReducerVersion extends Error {
  override readonly name = 'Reducer.UnsupportedVersion';
}

export function emptyProjection(): Projection {
  return {
    reducerVersion: REDUCER_VERSION,
    runId: null,
    principalId: null,
    tenant: null,
    status: 'running',
    stopReason: null,
    turns: 0,
    intents: 0,
    calls: {},
    violations: [],
    cancelRequested: false,
    leftStanding: [],
    tokens: 0,
    costMicros: 0,
    dependencies: {},
    circuits: {},
  };
}

/**
 * Rebuild the projection from events. `initial` is the projection a continued run carried over
 * (continue-as-new); without it, the empty projection. Linear in the number of events: one owned copy of
 * `initial`, then every event applied to it in place.
 */
export function reduce(
  events: readonly LedgerEvent[],
  version: number = REDUCER_VERSION,
  initial: Projection = emptyProjection(),
): Projection {
  if (version !== REDUCER_VERSION) throw new UnsupportedReducerVersion(`reducer version ${version} is not known`);
  const d = ownedProjection(initial);
  for (const e of events) applyOwned(d, e);
  return d;
}

export function projectionHash(p: Projection): string {
  return hashCanonical(p);
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
 * Whether a reconciliation contradicts the downstream evidence recorded with it: FAILED while the downstream
 * holds the effect, SUCCEEDED without an effect, or a receipt other than the one the downstream holds.
 */
function contradictsEvidence(e: Extract<LedgerEvent, { type: 'ToolEffectReconciled' }>): string | undefined {
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

/** Apply one event. Pure: the same projection and event always give the same result, and `p` is left as it was. */
export function apply(p: Projection, e: LedgerEvent): Projection {
  const d = ownedProjection(p);
  applyOwned(d, e);
  return d;
}

/**
 * Apply one event to a projection the caller owns (`ownedProjection`), in place: constant work per event, so a
 * run's ledger stays linear in its length. The same events give the same projection as `apply`, one by one.
 */
export function applyOwned(d: OwnedProjection, e: LedgerEvent): void {
  switch (e.type) {
    case 'LedgerCarriedForward':
      return;
    case 'RunCreated':
      d.runId = e.runId;
      d.principalId = e.principalId;
      d.tenant = e.tenant;
      return;
    case 'ModelRequestStarted':
      d.turns = Math.max(d.turns, e.turn);
      return;
    case 'ModelResponseRecorded':
      if (e.usage) {
        d.tokens += e.usage.promptTokens + e.usage.completionTokens;
        d.costMicros += e.usage.costMicros;
      }
      return;
    case 'ToolProposalRecorded': {
      const existing = d.calls[e.logicalCallId];
      d.calls[e.logicalCallId] = existing
        ? { ...existing, providerCallIds: [...existing.providerCallIds, e.providerCallId] }
        : {
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
      return;
    }
    case 'ProposalRejected':
      return decided(d, e.logicalCallId, 'FAILED', { errorCode: e.code }, e);
    case 'ArgumentsCanonicalized':
      return moveCall(
        d,
        e.logicalCallId,
        'VALIDATED',
        { operationKey: e.operationKey, argumentsHash: e.argumentsHash },
        e,
      );
    case 'AuthorizationAllowed':
      return decided(
        d,
        e.logicalCallId,
        'AUTHORIZED',
        { policyVersion: e.policyVersion, action: d.calls[e.logicalCallId]?.action ?? e.action },
        e,
      );
    case 'AuthorizationDenied':
      return decided(
        d,
        e.logicalCallId,
        'FAILED',
        { policyVersion: e.policyVersion, errorCode: e.code ?? 'Authorization.Denied' },
        e,
      );
    case 'ApprovalRequested':
      return decided(
        d,
        e.logicalCallId,
        'AWAITING_APPROVAL',
        { policyVersion: e.policyVersion, approval: 'pending' },
        e,
      );
    case 'ApprovalGranted':
      return decided(d, e.logicalCallId, 'APPROVED', { approvedBy: e.approver, approval: 'granted' }, e);
    case 'ApprovalDenied':
      return decided(d, e.logicalCallId, 'FAILED', { errorCode: 'Approval.Denied', approval: 'denied' }, e);
    case 'ApprovalWithdrawn':
      return patchCall(d, e.logicalCallId, { approval: 'withdrawn' }, e);
    case 'DispatchDeferred':
      return;
    case 'DispatchIntentRecorded': {
      const call = d.calls[e.logicalCallId];
      const first = call?.intentRecorded === false;
      decided(
        d,
        e.logicalCallId,
        'INTENT_RECORDED',
        {
          intentRecorded: true,
          policyVersion: e.intent.policyVersion,
          firstIntentAt: call?.firstIntentAt ?? e.at,
        },
        e,
      );
      if (first) d.intents += 1;
      return;
    }
    case 'ReauthorizationStarted': {
      const call = d.calls[e.logicalCallId];
      const seen = call?.attempts ?? 0;
      patchCall(
        d,
        e.logicalCallId,
        { reauthorizations: (call?.reauthorizations ?? 0) + 1, attempts: Math.max(seen, e.attempts) },
        e,
      );
      account(d, serviceOf(d, e.logicalCallId), (s) => ({
        ...s,
        attempts: s.attempts + Math.max(0, e.attempts - seen),
      }));
      return;
    }
    case 'IntentRepeated':
      // The repeat did nothing of its own: it mirrors the earlier call's settled outcome (UNKNOWN leaves it as it is).
      if (e.outcome === 'UNKNOWN') return;
      return moveCall(
        d,
        e.logicalCallId,
        e.outcome,
        {
          receipt: e.receipt ?? null,
          errorCode: e.outcome === 'FAILED' ? 'Intent.Repeated' : null,
          reconciledVia: 'same_intent',
        },
        e,
      );
    case 'ToolAttemptStarted': {
      const call = d.calls[e.logicalCallId];
      if (call?.intentRecorded !== true)
        d.violations.push(`#${e.seq} dispatch of ${e.logicalCallId} before DispatchIntentRecorded`);
      // A new dispatch is a new activity: its attempts count from zero (`attempts` is the current dispatch's).
      moveCall(
        d,
        e.logicalCallId,
        'DISPATCHING',
        {
          dispatches: (call?.dispatches ?? 0) + 1,
          attempts: 0,
          service: e.service ?? call?.service ?? null,
        },
        e,
      );
      if (e.dispatch === 1) account(d, e.service, (s) => ({ ...s, logicalCalls: s.logicalCalls + 1 }));
      return;
    }
    case 'ToolOutcomeMarkedUnknown': {
      // Attempts are counted once: an event reports all attempts of the current dispatch so far, and only the
      // ones not already counted by an earlier event of the same dispatch are added.
      const seen = d.calls[e.logicalCallId]?.attempts ?? 0;
      const service = serviceOf(d, e.logicalCallId);
      moveCall(d, e.logicalCallId, 'UNKNOWN', { attempts: Math.max(seen, e.attempts) }, e);
      account(d, service, (s) => ({
        ...s,
        attempts: s.attempts + Math.max(0, e.attempts - seen),
        unknown: s.unknown + 1,
      }));
      return;
    }
    case 'CircuitOpened':
      d.circuits[e.service] = e.until;
      return;
    case 'ToolEffectReconciled': {
      moveCall(
        d,
        e.logicalCallId,
        e.outcome,
        { receipt: e.receipt ?? e.evidence?.receipt ?? null, reconciledVia: e.via },
        e,
      );
      const contradiction = contradictsEvidence(e);
      if (contradiction !== undefined) d.violations.push(`#${e.seq} ${e.logicalCallId}: ${contradiction}`);
      return;
    }
    case 'ToolResultRecorded': {
      const seen = d.calls[e.logicalCallId]?.attempts ?? 0;
      const service = serviceOf(d, e.logicalCallId);
      moveCall(
        d,
        e.logicalCallId,
        e.state,
        {
          attempts: Math.max(seen, e.attempts),
          receipt: e.receipt ?? null,
          errorCode: e.errorCode ?? null,
        },
        e,
      );
      account(d, service, (s) => ({
        ...s,
        attempts: s.attempts + Math.max(0, e.attempts - seen),
        failed: s.failed + (e.state === 'FAILED' ? 1 : 0),
        queueDelayMs: s.queueDelayMs + (e.queueDelayMs ?? 0),
      }));
      return;
    }
    case 'CompensationRegistered':
      return patchCall(d, e.forwardCallId, { compensationCallId: e.compensationCallId }, e);
    case 'CompensationStarted':
      return;
    case 'CompensationCompleted':
      return patchCall(d, e.forwardCallId, { compensation: e.outcome }, e);
    case 'StandingEffectsSettled':
      return;
    case 'CancellationRequested':
      d.cancelRequested = true;
      return;
    case 'OperatorWaitStarted':
      d.status = 'waiting_for_operator';
      return;
    case 'RunCompleted':
      d.status = 'stopped';
      d.stopReason = e.stopReason;
      d.leftStanding = e.leftStanding;
      return;
  }
}

/** Calls waiting for a human approval (before their first dispatch, or a renewed one after it). */
export function pendingApprovals(p: Projection): string[] {
  return Object.values(p.calls)
    .filter((c) => c.approval === 'pending')
    .map((c) => c.logicalCallId)
    .sort();
}

/** Calls that are still UNKNOWN: the run cannot complete while any remains. */
export function unknownCalls(p: Projection): string[] {
  return Object.values(p.calls)
    .filter((c) => c.state === 'UNKNOWN')
    .map((c) => c.logicalCallId)
    .sort();
}
