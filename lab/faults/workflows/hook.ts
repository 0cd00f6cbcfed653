/**
 * The workflow side of the in-process crash points: workflow code calls `workflowCrashPoint(name)` and a sink
 * (which runs in the worker, outside the sandbox) acts on it. Sink calls run after the activation and BEFORE its
 * completion is handed to Core (checked in @temporalio/worker 1.24, `Worker#activate`'s `finally`), so a kill
 * there loses the whole workflow task: whatever the task decided never reaches the history.
 *
 * Only runs started by the fault runner (memo `ledgerloopFaults: true`) call the sink, and never while replaying,
 * so ordinary workers and replay workers never see it. Deterministic: it changes no command.
 */
import { proxySinks, workflowInfo, type Sinks } from '@temporalio/workflow';
import type { InProcessPoint } from '../catalog';

/** The memo key the fault runner sets on the runs it starts. */
export const FAULTS_MEMO_KEY = 'ledgerloopFaults';

/** The ledger's hash and length as a worker held it, between workflow tasks. */
export interface LedgerMark {
  readonly projectionHash: string;
  readonly eventCount: number;
}

/** The sinks a worker registers to serve workflow crash points (see FAULT_SINKS in crash-points.ts). */
export interface FaultSinks extends Sinks {
  ledgerloopFaults: {
    crashPoint(point: InProcessPoint): void;
    /** The ledger as an activation begins: durable, what completed workflow tasks made of it. */
    ledgerMark(mark: LedgerMark): void;
  };
}

const sinks = proxySinks<FaultSinks>();

/** Whether this task belongs to a run the fault runner started, executing for the first time (not replaying). */
function underFaultRunner(): boolean {
  const info = workflowInfo();
  return !info.unsafe.isReplaying && info.memo?.[FAULTS_MEMO_KEY] === true;
}

/** A named crash point inside workflow code. A no-op unless the fault runner started this run. */
export function workflowCrashPoint(point: InProcessPoint): void {
  if (underFaultRunner()) sinks.ledgerloopFaults.crashPoint(point);
}

/** Reports the ledger (read only under the fault runner) to the worker, where a crash line picks it up. */
export function reportLedgerMark(read: () => LedgerMark | undefined): void {
  if (!underFaultRunner()) return;
  const mark = read();
  if (mark !== undefined) sinks.ledgerloopFaults.ledgerMark(mark);
}
