/**
 * What a run shows outside the workflow: search attributes and current details for the Temporal UI, and the
 * result a finished run returns. Pure functions of the ledger, called from workflow code.
 */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { pendingApprovals, unknownCalls } from '../src/domain/reducer';
import type { AgentRunResult, Budgets, StopReason } from '../src/domain/run';
import { SA } from '../src/server/search-attributes';
import type { Ledger } from './ledger';

/** Publish the run's state as search attributes and as the UI's current details (markdown). */
export function publish(ledger: Ledger, budgets: Budgets): void {
  const p = ledger.projection;
  upsertSearchAttributes([
    { key: SA.status, value: p.status },
    { key: SA.unknownCalls, value: unknownCalls(p).length },
    { key: SA.pendingApprovals, value: pendingApprovals(p).length },
    ...(p.stopReason ? [{ key: SA.stopReason, value: p.stopReason }] : []),
  ]);
  const rows = Object.values(p.calls).map(
    (c) => `| ${c.logicalCallId} | ${c.toolName} | ${c.state} | ${c.operationKey?.slice(0, 14) ?? ''} | ${c.receipt ?? ''} |`,
  );
  setCurrentDetails(
    [
      `**${p.status}**${p.stopReason ? ` (${p.stopReason})` : ''} · turn ${p.turns}/${budgets.maxTurns} · intents ${p.intents}/${budgets.maxToolCalls}`,
      '',
      '| call | tool | state | key | receipt |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

export function runResult(ledger: Ledger, stopReason: StopReason, detail: string, finalText?: string): AgentRunResult {
  const snap = ledger.snapshot();
  return {
    stopReason,
    detail,
    ...(finalText !== undefined ? { finalText } : {}),
    projectionHash: snap.projectionHash,
    eventCount: snap.eventCount,
    calls: Object.values(snap.projection.calls).map((c) => ({
      logicalCallId: c.logicalCallId,
      toolName: c.toolName,
      state: c.state,
      ...(c.operationKey ? { operationKey: c.operationKey } : {}),
      ...(c.receipt ? { receipt: c.receipt } : {}),
    })),
  };
}
