/**
 * The run's ledger inside the workflow: an append-only list of domain events plus the projection the pure
 * reducer keeps up to date. Appends happen in workflow code only, so replay rebuilds them exactly. The events an
 * operator follows a call by are also logged, with the call id and operation key (src/domain/ledger-log.ts).
 */
import { inWorkflowContext, log, workflowInfo } from '@temporalio/workflow';
import { ledgerLogLine } from '../src/domain/ledger-log';
import type { LedgerEvent, LedgerEventBody } from '../src/domain/ledger-events';
import {
  apply,
  emptyProjection,
  projectionHash,
  reduce,
  REDUCER_VERSION,
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
  private current: Projection;
  private readonly baseSeq: number;

  /** A fresh ledger, or one that continues from a projection carried over by continue-as-new. */
  constructor(carried?: { readonly projection: Projection; readonly eventCount: number }) {
    this.base = carried?.projection ?? emptyProjection();
    this.current = this.base;
    this.baseSeq = carried?.eventCount ?? 0;
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
    this.current = apply(this.current, event);
    // The SDK's workflow logger adds the run's ids; a replay writes nothing, so it does not build the line either.
    if (inWorkflowContext() && !workflowInfo().unsafe.isReplaying) {
      const line = ledgerLogLine(event, this.current);
      if (line) log.info(line.msg, line.fields);
    }
    return event;
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
    const projection = upTo === undefined ? this.current : reduce(events, REDUCER_VERSION, this.base);
    return {
      reducerVersion: REDUCER_VERSION,
      eventCount: this.baseSeq + events.length,
      events,
      projection,
      projectionHash: projectionHash(projection),
    };
  }
}
