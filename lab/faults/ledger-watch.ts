/** The ledger as the original worker serves it during a run, frozen at the first fault. */
import type { WorkflowHandle } from '@temporalio/client';
import { ledgerQuery } from '../../workflows/definitions';
import type { ServerLink } from './lab';
import { pause, withDeadline } from './waits';
import type { LedgerMark } from './workflows/hook';

/**
 * Keeps the latest ledger snapshot the ORIGINAL worker served, until the first fault freezes it: that frozen
 * snapshot is "the projection before the restart" which a new worker must rebuild from history.
 */
export class LedgerWatch {
  latest?: LedgerMark;
  frozen?: LedgerMark;

  constructor(
    private readonly link: ServerLink,
    private readonly handle: WorkflowHandle,
  ) {}

  async poll(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.frozen) {
      try {
        this.latest = await withDeadline(this.link, 2_000, () => this.handle.query(ledgerQuery));
      } catch {
        /* no worker right now */
      }
      // A fallback only: an in-process crash line carries the worker's own ledger mark (crash-points.ts), and a
      // runner-driven fault freezes with a query of its own (freezeNow). Each query makes the worker serialize
      // its whole ledger: at 50 ms this poll cost about 0.1 s of CPU per second of a run.
      await pause(1_000, signal);
    }
  }

  /**
   * Freezes at an in-process crash (the process is already gone): on the ledger the crash line carried (a workflow
   * crash point reads it inside the task it kills), else on the latest snapshot served.
   */
  freezeAtCrash(mark?: LedgerMark): void {
    this.frozen ??= mark ?? this.latest;
  }

  /** Queries now and freezes (runner-driven faults: the worker is still alive). */
  async freezeNow(): Promise<void> {
    if (this.frozen) return;
    try {
      this.frozen = await withDeadline(this.link, 3_000, () => this.handle.query(ledgerQuery));
    } catch {
      this.freezeAtCrash();
    }
  }
}
