/**
 * The pure, versioned reducer. `reduce(events, version)` rebuilds the projection; `projectionHash` hashes it.
 * Invariants: replay of the same events with the same reducer version gives the same hash, and a dispatch
 * (ToolAttemptStarted) without an earlier DispatchIntentRecorded for its call is a recorded violation.
 */
import { hashCanonical } from './canonical';
import type { CallState, LedgerEvent } from './ledger-events';
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
  readonly intentRecorded: boolean;
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
 * Whether a reconciliation contradicts the downstream evidence recorded with it: FAILED while the downstream
 * holds the effect, SUCCEEDED without an effect, or a receipt other than the one the downstream holds.
 */
function contradictsEvidence(e: Extract<LedgerEvent, { type: 'ToolEffectReconciled' }>): string | undefined {
  const ev = e.evidence;
  if (ev === undefined) return undefined;
  const holdsEffect = ev.lookup === 'found' && ev.status === 'completed';
  if (e.outcome === 'FAILED' && holdsEffect)
    return `FAILED while ${ev.service} holds the effect under ${ev.operationKey}`;
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
            intentRecorded: false,
            origin: e.origin ?? 'model',
            compensationCallId: null,
            compensation: null,
            service: null,
          };
      return;
    }
    case 'ProposalRejected':
      return patchCall(d, e.logicalCallId, { state: 'FAILED', errorCode: e.code }, e);
    case 'ArgumentsCanonicalized':
      return patchCall(
        d,
        e.logicalCallId,
        { state: 'VALIDATED', operationKey: e.operationKey, argumentsHash: e.argumentsHash },
        e,
      );
    case 'AuthorizationAllowed':
      return patchCall(d, e.logicalCallId, { state: 'AUTHORIZED', policyVersion: e.policyVersion }, e);
    case 'AuthorizationDenied':
      return patchCall(
        d,
        e.logicalCallId,
        { state: 'FAILED', policyVersion: e.policyVersion, errorCode: e.code ?? 'Authorization.Denied' },
        e,
      );
    case 'ApprovalRequested':
      return patchCall(d, e.logicalCallId, { state: 'AWAITING_APPROVAL', policyVersion: e.policyVersion }, e);
    case 'ApprovalGranted':
      return patchCall(d, e.logicalCallId, { state: 'VALIDATED', approvedBy: e.approver }, e);
    case 'ApprovalDenied':
      return patchCall(d, e.logicalCallId, { state: 'FAILED', errorCode: 'Approval.Denied' }, e);
    case 'DispatchDeferred':
      return;
    case 'DispatchIntentRecorded': {
      const first = d.calls[e.logicalCallId]?.intentRecorded === false;
      patchCall(
        d,
        e.logicalCallId,
        { state: 'INTENT_RECORDED', intentRecorded: true, policyVersion: e.intent.policyVersion },
        e,
      );
      if (first) d.intents += 1;
      return;
    }
    case 'IntentRepeated':
      // The repeat did nothing of its own: it mirrors the earlier call's settled outcome (UNKNOWN leaves it as it is).
      if (e.outcome === 'UNKNOWN') return;
      return patchCall(
        d,
        e.logicalCallId,
        {
          state: e.outcome,
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
      patchCall(
        d,
        e.logicalCallId,
        {
          state: 'DISPATCHING',
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
      patchCall(d, e.logicalCallId, { state: 'UNKNOWN', attempts: Math.max(seen, e.attempts) }, e);
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
      patchCall(
        d,
        e.logicalCallId,
        { state: e.outcome, receipt: e.receipt ?? e.evidence?.receipt ?? null, reconciledVia: e.via },
        e,
      );
      const contradiction = contradictsEvidence(e);
      if (contradiction !== undefined) d.violations.push(`#${e.seq} ${e.logicalCallId}: ${contradiction}`);
      return;
    }
    case 'ToolResultRecorded': {
      const seen = d.calls[e.logicalCallId]?.attempts ?? 0;
      const service = serviceOf(d, e.logicalCallId);
      patchCall(
        d,
        e.logicalCallId,
        {
          state: e.state,
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
      return;
  }
}

/** Calls waiting for a human approval. */
export function pendingApprovals(p: Projection): string[] {
  return Object.values(p.calls)
    .filter((c) => c.state === 'AWAITING_APPROVAL')
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
