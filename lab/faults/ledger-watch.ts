/** The ledger as the original worker serves it during a run, frozen at the first fault. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { ledgerQuery } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import type { ServerLink } from './lab';
import { withDeadline } from './waits';

/**
 * Keeps the latest ledger snapshot the ORIGINAL worker served, until the first fault freezes it: that frozen
 * snapshot is "the projection before the restart" which a new worker must rebuild from history.
 */
export class LedgerWatch {
  latest?: LedgerSnapshot;
  frozen?: LedgerSnapshot;

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
      // Often: a scripted run goes from its first workflow task to an in-process kill in about half a second, and
      // the snapshot must land between the original worker's tasks (at 250 ms the crash-point cases got none).
      await sleep(50);
    }
  }

  /** Freezes the latest snapshot (in-process crashes: the process is already gone). */
  freezeLatest(): void {
    this.frozen ??= this.latest;
  }

  /** Queries now and freezes (runner-driven faults: the worker is still alive). */
  async freezeNow(): Promise<void> {
    if (this.frozen) return;
    try {
      this.frozen = await withDeadline(this.link, 3_000, () => this.handle.query(ledgerQuery));
    } catch {
      this.freezeLatest();
    }
  }
}
