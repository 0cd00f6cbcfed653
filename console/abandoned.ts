/**
 * Runs that ended without settling: terminated, timed out or failed agent runs whose history shows effects still
 * standing (standing-effects.ts). Each effect is an inbox item until a settlement (`settleAbandoned`, started by
 * the console under a deterministic id per effect) has closed it as offset or proven absent.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { historyEvidence, type HistoryEvidence } from '../host/client/history-evidence';
import type { SettleAbandonedResult } from '../workflows/console-actions.workflow';
import { factsFromBody, mapLimit } from './call-facts';
import { ABANDONED_SCAN_LIMIT, type ConsoleDeps } from './config';
import type { InboxItem } from './inbox';
import { standingEffects, type StandingEffect } from './standing-effects';
import { asPerson } from './temporal';

/** How a run closed without running its own settlement (Temporal's execution status names). */
export const UNSETTLED_CLOSES = ['Terminated', 'TimedOut', 'Failed'] as const;

/** Whether a run's status (describe's `TERMINATED` or visibility's `Terminated`) is a close without settling. */
export function closedWithoutSettling(status: string): boolean {
  const pascal = status.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _u: string, c: string) => c.toUpperCase());
  return (UNSETTLED_CLOSES as readonly string[]).includes(pascal);
}

/** The id the console starts the settlement of one effect under (reusable once the earlier one closed). */
export function settlementId(runId: string, logicalCallId: string): string {
  return `ledgerloop-settle:${runId}:${logicalCallId}`;
}

/** Histories of closed runs never change: read once. Bounded. */
const evidenceCache = new Map<string, HistoryEvidence>();

export async function closedRunEvidence(
  deps: ConsoleDeps,
  token: string,
  workflowId: string,
  runId: string,
  cache = true,
): Promise<HistoryEvidence> {
  const cached = cache ? evidenceCache.get(runId) : undefined;
  if (cached) return cached;
  const history = await asPerson(
    deps.temporal,
    token,
    () => deps.temporal.client.workflow.getHandle(workflowId, runId).fetchHistory(),
    30_000,
  );
  const evidence = await historyEvidence(history, loadDataConverter(deps.temporal.dataConverter));
  if (!cache) return evidence;
  if (evidenceCache.size > 500) evidenceCache.delete(evidenceCache.keys().next().value!);
  evidenceCache.set(runId, evidence);
  return evidence;
}

type Settlement = { running: true } | { running: false; result?: SettleAbandonedResult; failed?: string } | undefined;

/** Settlements seen: a closed one never changes (kept); none or a running one is asked again after 5 s. */
const settlements = new Map<string, { at: number; value: Settlement }>();

/** The settlement of one effect, if one ran: still running, or its result. */
export async function settlementOf(
  deps: ConsoleDeps,
  token: string,
  runId: string,
  logicalCallId: string,
): Promise<Settlement> {
  const id = settlementId(runId, logicalCallId);
  const seen = settlements.get(id);
  if (seen && (Date.now() - seen.at < 5_000 || (seen.value && !seen.value.running))) return seen.value;
  const handle = deps.temporal.client.workflow.getHandle(id);
  let value: Settlement;
  try {
    const d = await asPerson(deps.temporal, token, () => handle.describe());
    if (d.status.name === 'RUNNING') value = { running: true };
    else if (d.status.name !== 'COMPLETED') value = { running: false, failed: d.status.name };
    else
      value = {
        running: false,
        result: (await asPerson(deps.temporal, token, () => handle.result())) as SettleAbandonedResult,
      };
  } catch {
    value = undefined; // none started
  }
  if (settlements.size > 5_000) settlements.clear();
  settlements.set(id, { at: Date.now(), value });
  return value;
}

/** Forget what is known of the settlement of one effect (the console just started one). */
export function forgetSettlement(runId: string, logicalCallId: string): void {
  settlements.delete(settlementId(runId, logicalCallId));
}

function item(
  w: WorkflowExecutionInfo,
  e: StandingEffect,
  deps: ConsoleDeps,
  note?: string,
): Omit<InboxItem, 'actions'> {
  const facts = factsFromBody(deps.tools, e.intent.toolName, e.body, e.intent.principalId);
  return {
    key: `abandoned/${w.workflowId}/${w.runId}/${e.intent.logicalCallId}`,
    kind: 'abandoned',
    workflowId: w.workflowId,
    runId: w.runId,
    logicalCallId: e.intent.logicalCallId,
    tool: e.intent.toolName,
    summary: facts.summary,
    ...(facts.amount ? { amount: facts.amount } : {}),
    principal: e.intent.principalId,
    since: (w.closeTime ?? w.startTime).toISOString(),
    operationKey: e.intent.operationKey,
    argumentsHash: e.intent.argumentsHash,
    closedAs: w.status.name,
    state: e.state,
    ...(note ? { note } : {}),
  };
}

/** Items for the effects closed runs of `tenant` left standing and no settlement has closed. */
export async function abandonedItems(
  deps: ConsoleDeps,
  tenant: string,
  token: string,
): Promise<Omit<InboxItem, 'actions'>[]> {
  const statuses = UNSETTLED_CLOSES.map((s) => `ExecutionStatus = '${s}'`).join(' OR ');
  const query = `WorkflowType = 'agentRun' AND LedgerloopTenant = '${tenant}' AND (${statuses})`;
  const runs = await asPerson(
    deps.temporal,
    token,
    async () => {
      const out: WorkflowExecutionInfo[] = [];
      for await (const w of deps.temporal.client.workflow.list({ query, pageSize: ABANDONED_SCAN_LIMIT })) {
        out.push(w);
        if (out.length >= ABANDONED_SCAN_LIMIT) break;
      }
      return out;
    },
    30_000,
  );
  const perRun = await mapLimit(runs, 4, async (w) => {
    const evidence = await closedRunEvidence(deps, token, w.workflowId, w.runId);
    const effects = standingEffects(evidence, deps.tools);
    const out: Omit<InboxItem, 'actions'>[] = [];
    for (const e of effects) {
      const s = await settlementOf(deps, token, w.runId, e.intent.logicalCallId);
      if (s && !s.running && s.result && s.result.outcome !== 'left') continue; // settled: offset or no effect
      const note = !s
        ? undefined
        : s.running
          ? 'a settlement is running'
          : s.result
            ? `last settlement by ${s.result.actor.principalId}: ${s.result.detail}`
            : `last settlement ${s.failed ?? 'failed'}`;
      out.push(item(w, e, deps, note));
    }
    return out;
  });
  return perRun.flat();
}
