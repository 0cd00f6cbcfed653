/**
 * The run's ledger inside the workflow: an append-only list of domain events plus the projection the pure
 * reducer keeps up to date. Appends happen in workflow code only, so replay rebuilds them exactly. The events an
 * operator follows a call by are also logged, with the call id and operation key (src/domain/ledger-log.ts).
 *
 * An append costs the same on the run's first turn and its thousandth: the ledger owns its projection and
 * applies each event in place (`applyOwned`), and it keeps the call ids the loop asks for every turn (by state,
 * by operation key, in order) as indexes, so no turn scans every call. `test/unit/ledger-index.test.ts` checks
 * the indexes against full scans of the reduced projection.
 */
import { inWorkflowContext, log, workflowInfo } from '@temporalio/workflow';
import { ledgerLogLine } from '../src/domain/ledger-log';
import type { CallState, LedgerEvent, LedgerEventBody } from '../src/domain/ledger-events';
import {
  applyOwned,
  emptyProjection,
  ownedProjection,
  projectionHash,
  reduce,
  REDUCER_VERSION,
  type CallView,
  type OwnedProjection,
  type Projection,
} from '../src/domain/reducer';

export interface LedgerSnapshot {
  readonly reducerVersion: number;
  readonly eventCount: number;
  readonly events: readonly LedgerEvent[];
  readonly projection: Projection;
  readonly projectionHash: string;
}

export class Ledger {
  private readonly events: LedgerEvent[] = [];
  private readonly base: Projection;
  private readonly current: OwnedProjection;
  private readonly baseSeq: number;
  /** Call ids in the order the projection lists its calls, and each one's place in it. */
  private readonly order: string[] = [];
  private readonly place = new Map<string, number>();
  private readonly byState = new Map<CallState, Set<string>>();
  /** Call ids by operation key, in `order`. */
  private readonly byKey = new Map<string, string[]>();
  /** When each call's intent was first recorded (ms), by the action it was authorized as: rate-limit windows. */
  /** Per action, the calls' first intent times in the order they were recorded (so, in time order). */
  private readonly intentsByAction = new Map<string, Array<{ readonly id: string; at: number }>>();
  /** Calls whose approval is pending. */
  private readonly awaitingApproval = new Set<string>();

  /** A fresh ledger, or one that continues from a projection carried over by continue-as-new. */
  constructor(carried?: { readonly projection: Projection; readonly eventCount: number }) {
    this.base = carried?.projection ?? emptyProjection();
    this.current = ownedProjection(this.base);
    this.baseSeq = carried?.eventCount ?? 0;
    for (const call of Object.values(this.current.calls)) this.index(undefined, call);
  }

  /** Append one event. Fields left undefined are dropped, so callers may pass optional values as they are. */
  append(body: LedgerEventBody): LedgerEvent {
    const defined = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    // Date.now() in workflow code is the workflow-task time: deterministic on replay.
    const event = {
      ...defined,
      seq: this.baseSeq + this.events.length + 1,
      at: new Date(Date.now()).toISOString(),
    } as LedgerEvent;
    this.events.push(event);
    const id = callIdOf(event);
    const before = id === undefined ? undefined : this.current.calls[id];
    applyOwned(this.current, event);
    const after = id === undefined ? undefined : this.current.calls[id];
    if (after !== undefined && after !== before) this.index(before, after);
    // The SDK's workflow logger adds the run's ids; a replay writes nothing, so it does not build the line either.
    if (inWorkflowContext() && !workflowInfo().unsafe.isReplaying) {
      const line = ledgerLogLine(event, this.current);
      if (line) log.info(line.msg, line.fields);
    }
    return event;
  }

  /** The ids of the calls in `state`, sorted (what `unknownCalls` and `pendingApprovals` give, without a scan). */
  callsIn(state: CallState): string[] {
    return [...(this.byState.get(state) ?? [])].sort();
  }

  countIn(state: CallState): number {
    return this.byState.get(state)?.size ?? 0;
  }

  /** How many calls wait for a human approval now (before their first dispatch, or a renewed one after it). */
  get pendingApprovalCount(): number {
    return this.awaitingApproval.size;
  }

  /**
   * The times (ms) this run's intents of `action` were first recorded after `sinceMs`, except `exceptCallId`'s
   * own: what a rate limit counts. From the projection, so the window survives continue-as-new. Walks back from
   * the newest intent and stops at the window's start, so a long run pays for its window, not for its length.
   */
  intentTimes(action: string, exceptCallId: string, sinceMs: number): number[] {
    const times: number[] = [];
    const all = this.intentsByAction.get(action) ?? [];
    for (let i = all.length - 1; i >= 0 && all[i]!.at > sinceMs; i--)
      if (all[i]!.id !== exceptCallId) times.push(all[i]!.at);
    return times;
  }

  /**
   * The calls that carry operation key `key`, in the projection's order: the run's one dedupe index (a proposal
   * is keyed, and indexed here, before any call of its turn is sent; `AgentRun.callAll` and `earlierIntent` ask it).
   */
  callsWithKey(key: string): CallView[] {
    return (this.byKey.get(key) ?? []).map((id) => this.current.calls[id]!);
  }

  /** The last `n` calls, in the projection's order. */
  recentCalls(n: number): CallView[] {
    return this.order.slice(-n).map((id) => this.current.calls[id]!);
  }

  get callCount(): number {
    return this.order.length;
  }

  private index(before: CallView | undefined, after: CallView): void {
    const id = after.logicalCallId;
    const intentMoved = before?.firstIntentAt !== after.firstIntentAt || before?.action !== after.action;
    if (after.action !== null && after.firstIntentAt !== null && intentMoved) {
      const times = this.intentsByAction.get(after.action) ?? [];
      const at = Date.parse(after.firstIntentAt);
      const known = before?.firstIntentAt ? times.findIndex((t) => t.id === id) : -1;
      if (known >= 0) times.splice(known, 1);
      if (before?.action && before.action !== after.action) {
        const old = this.intentsByAction.get(before.action) ?? [];
        this.intentsByAction.set(
          before.action,
          old.filter((t) => t.id !== id),
        );
      }
      // In time order: an intent is recorded at the workflow's clock, which never goes back.
      let i = times.length;
      while (i > 0 && times[i - 1]!.at > at) i--;
      times.splice(i, 0, { id, at });
      this.intentsByAction.set(after.action, times);
    }
    if (after.approval === 'pending') this.awaitingApproval.add(id);
    else this.awaitingApproval.delete(id);
    if (!this.place.has(id)) {
      this.place.set(id, this.order.length);
      this.order.push(id);
    }
    if (before?.state !== after.state) {
      if (before !== undefined) this.byState.get(before.state)?.delete(id);
      const set = this.byState.get(after.state) ?? new Set<string>();
      this.byState.set(after.state, set.add(id));
    }
    if (before?.operationKey !== after.operationKey) {
      if (before?.operationKey) {
        const ids = this.byKey.get(before.operationKey)?.filter((x) => x !== id) ?? [];
        this.byKey.set(before.operationKey, ids);
      }
      if (after.operationKey) {
        const ids = [...(this.byKey.get(after.operationKey) ?? []), id];
        this.byKey.set(
          after.operationKey,
          ids.sort((x, y) => this.place.get(x)! - this.place.get(y)!),
        );
      }
    }
  }

  get projection(): Projection {
    return this.current;
  }

  get size(): number {
    return this.baseSeq + this.events.length;
  }

  /**
   * The ledger as a query returns it: this run's events (a continued run starts from the carried projection).
   * `upTo` rebuilds the projection from the first n of this run's events only.
   */
  snapshot(upTo?: number): LedgerSnapshot {
    const events = upTo === undefined ? this.events.slice() : this.events.slice(0, upTo);
    // A copy: the ledger's own projection changes with the next append, a snapshot does not.
    const projection = upTo === undefined ? ownedProjection(this.current) : reduce(events, REDUCER_VERSION, this.base);
    return {
      reducerVersion: REDUCER_VERSION,
      eventCount: this.baseSeq + events.length,
      events,
      projection,
      projectionHash: projectionHash(projection),
    };
  }
}

/** The call an event updates, if any. */
function callIdOf(e: LedgerEvent): string | undefined {
  if ('logicalCallId' in e && typeof e.logicalCallId === 'string') return e.logicalCallId;
  if ('forwardCallId' in e && typeof e.forwardCallId === 'string') return e.forwardCallId;
  return undefined;
}
