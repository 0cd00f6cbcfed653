/**
 * The pure, versioned reducer. `reduce(events, version)` rebuilds the projection; `projectionHash` hashes it.
 * Invariants, each a recorded violation when broken: replay of the same events with the same reducer version
 * gives the same hash; a dispatch (ToolAttemptStarted) needs an earlier DispatchIntentRecorded for its call; a
 * call's state only moves forward (src/domain/lifecycle.ts), and once a call has dispatched, only its dispatches,
 * lookups and an operator move it (a decision taken again is recorded on it and leaves its state alone).
 */
import { hashCanonical } from './canonical';
import type { CallState, LedgerEvent, LeftStanding } from './ledger-events';
import { EVENT_HANDLERS } from './reducer-events';
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

/** Apply one event. Pure: the same projection and event always give the same result, and `p` is left as it was. */
export function apply(p: Projection, e: LedgerEvent): Projection {
  const d = ownedProjection(p);
  applyOwned(d, e);
  return d;
}

/**
 * Apply one event to a projection the caller owns (`ownedProjection`), in place: constant work per event, so a
 * run's ledger stays linear in its length. The same events give the same projection as `apply`, one by one.
 * What each event type does is its handler in `EVENT_HANDLERS` (reducer-events.ts).
 */
export function applyOwned(d: OwnedProjection, e: LedgerEvent): void {
  // The table's type pairs each event type with its handler; TypeScript cannot see that `e.type` picks the
  // handler of `e`'s own member, hence the one widening here.
  (EVENT_HANDLERS[e.type] as (d: OwnedProjection, e: LedgerEvent) => void)(d, e);
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
