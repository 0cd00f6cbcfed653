/**
 * What a run shows outside the workflow: search attributes and current details for the Temporal UI, and the
 * result a finished run returns. Pure functions of the ledger, called from workflow code.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { AgentRunResult, Budgets, StopReason } from '../src/domain/run';
import { SA } from '../src/domain/search-attributes';
import type { Ledger } from './ledger';

/**
 * Publishes the run's state as search attributes and as the UI's current details (markdown).
 *
 * Each search-attribute upsert is a history event and a visibility write, so only the keys whose value differs
 * from what the workflow already carries are upserted (`workflowInfo().typedSearchAttributes` holds the
 * start-time values, every earlier upsert, and the previous run's values after continue-as-new): a normal turn
 * upserts nothing. The current details cost no event; they are rebuilt only when the ledger moved.
 */
export class RunView {
  private detailsAt = -1;

  constructor(
    private readonly ledger: Ledger,
    private readonly budgets: Budgets,
  ) {}

  /** Set the run's identity attributes (principal, tenant, strategy), when the starter has not already. */
  identify(values: { readonly principal: string; readonly tenant: string; readonly strategy: string }): void {
    this.upsert([
      { key: SA.principal, value: values.principal },
      { key: SA.tenant, value: values.tenant },
      { key: SA.strategy, value: values.strategy },
    ]);
  }

  publish(): void {
    const p = this.ledger.projection;
    this.upsert([
      { key: SA.status, value: p.status },
      { key: SA.unknownCalls, value: this.ledger.countIn('UNKNOWN') },
      { key: SA.pendingApprovals, value: this.ledger.pendingApprovalCount },
      ...(p.stopReason ? [{ key: SA.stopReason, value: p.stopReason }] : []),
      ...(p.status === 'stopped' ? [{ key: SA.leftStanding, value: p.leftStanding.length }] : []),
    ]);
    if (this.detailsAt !== this.ledger.size) {
      this.detailsAt = this.ledger.size;
      setCurrentDetails(currentDetails(this.ledger, this.budgets));
    }
  }

  private upsert(pairs: SearchAttributeUpdatePair[]): void {
    const current = workflowInfo().typedSearchAttributes;
    const changed = pairs.filter((u) => current.get(u.key) !== u.value);
    if (changed.length > 0) upsertSearchAttributes(changed);
  }
}

/** Rows of the details table: the latest calls. A long run's full list is one `ledgerloop show` away. */
const DETAIL_ROWS = 25;

/**
 * The Temporal UI's "current details" of the run: its status, budgets and its latest calls. Bounded, so a
 * 1,000-call run builds the same small table each turn as a 1-call run.
 */
function currentDetails(ledger: Ledger, budgets: Budgets): string {
  const p = ledger.projection;
  const rows = ledger
    .recentCalls(DETAIL_ROWS)
    .map(
      (c) =>
        `| ${c.logicalCallId} | ${c.toolName} | ${c.state} | ${c.operationKey?.slice(0, 14) ?? ''} | ${c.receipt ?? ''} |`,
    );
  const earlier = ledger.callCount - rows.length;
  return [
    `**${p.status}**${p.stopReason ? ` (${p.stopReason})` : ''} · turn ${p.turns}/${budgets.maxTurns} · intents ${p.intents}/${budgets.maxToolCalls}`,
    '',
    '| call | tool | state | key | receipt |',
    '|---|---|---|---|---|',
    ...rows,
    ...(earlier > 0
      ? ['', `${earlier} earlier call(s) not shown: \`ledgerloop show ${workflowInfo().workflowId}\` lists every call.`]
      : []),
  ].join('\n');
}

export function runResult(ledger: Ledger, stopReason: StopReason, detail: string, finalText?: string): AgentRunResult {
  const snap = ledger.snapshot();
  return {
    stopReason,
    detail,
    leftStanding: snap.projection.leftStanding,
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
