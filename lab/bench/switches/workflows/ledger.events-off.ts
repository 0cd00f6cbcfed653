/**
 * Bench switch `ledger-events` (off, in the workflow bundle): stands in for workflows/ledger.ts with a ledger that
 * keeps no list of its events and writes no log line for them. Each event is still built and applied to the
 * projection by the same reducer, and indexed (the run decides from them); what leaves is the event list a query
 * returns (`snapshot` returns none) and the per-event log lines an operator follows a call by.
 *
 * Reaches into the real ledger's private state (its projection, indexes and sequence base): a change there breaks
 * this cell loudly (its runs fail), never silently.
 *
 * Workflow-safe: pure.
 */
import type { LedgerEvent, LedgerEventBody } from '../../../../src/domain/ledger-events';
import { applyOwned, type CallView, type OwnedProjection } from '../../../../src/domain/reducer';
import { Ledger as RealLedger, type LedgerSnapshot } from '../../../../workflows/ledger';
import type { SwitchMark } from '../marks';

export type { LedgerSnapshot } from '../../../../workflows/ledger';

const MARK: SwitchMark = 'ledgerloop-bench-switch:ledger-events';

/** What this stub reads of the real ledger's private state. */
interface Internals {
  readonly current: OwnedProjection;
  readonly baseSeq: number;
  index(before: CallView | undefined, after: CallView): void;
}

export class Ledger extends RealLedger {
  private appended = 0;

  private get internals(): Internals {
    return this as unknown as Internals;
  }

  override append(body: LedgerEventBody): LedgerEvent {
    const { current, baseSeq } = this.internals;
    if (current === undefined) throw new Error(`${MARK}: the real ledger's projection moved`);
    const defined = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    this.appended += 1;
    const event = { ...defined, seq: baseSeq + this.appended, at: new Date(Date.now()).toISOString() } as LedgerEvent;
    const id =
      'logicalCallId' in event && typeof event.logicalCallId === 'string'
        ? event.logicalCallId
        : 'forwardCallId' in event && typeof event.forwardCallId === 'string'
          ? event.forwardCallId
          : undefined;
    const before = id === undefined ? undefined : current.calls[id];
    applyOwned(current, event);
    const after = id === undefined ? undefined : current.calls[id];
    if (after !== undefined && after !== before) this.internals.index(before, after);
    return event;
  }

  override get size(): number {
    return this.internals.baseSeq + this.appended;
  }

  override snapshot(upTo?: number): LedgerSnapshot {
    return { ...super.snapshot(upTo), eventCount: this.size };
  }
}
