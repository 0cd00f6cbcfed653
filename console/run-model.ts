/** What the run page shows, read for the signed-in person: the run, its ledger, its waiting calls, its history. */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { SA } from '../src/domain/search-attributes';
import type { LedgerSnapshot } from '../workflows/ledger';
import { ledgerQuery, pendingApprovalsQuery, type PendingApproval } from '../workflows/definitions';
import { closedRunEvidence, closedWithoutSettling, settlementOf } from './abandoned';
import type { ConsoleDeps } from './config';
import { isRunOfTenant } from './ledgerloop-runs';
import { ConsoleRefusal, refusal, refusalOf, type Refusal } from './refusal';
import type { Session } from './session';
import { standingEffects, type StandingEffect } from './standing-effects';
import { asPerson, temporalUiLink } from './temporal';
import { callRows, timeline, type CallRow, type TimelineRow } from './timeline';

/** An update the run accepted, as its history recorded the request (never the token). */
export interface RecordedRequest {
  readonly name: string;
  readonly fields: Readonly<Record<string, string>>;
}

export interface RunPage {
  readonly workflowId: string;
  readonly runId: string;
  readonly status: string;
  readonly open: boolean;
  readonly taskQueue: string;
  readonly tenant: string;
  readonly principal: string;
  readonly startTime: string;
  readonly closeTime?: string;
  readonly ledger?: LedgerSnapshot;
  readonly ledgerProblem?: string;
  readonly pending: readonly PendingApproval[];
  readonly rows: readonly TimelineRow[];
  readonly calls: readonly CallRow[];
  /** A run closed without settling: the effects its history shows standing, and what a settlement said. */
  readonly standing: readonly { readonly effect: StandingEffect; readonly note?: string; readonly settled: boolean }[];
  readonly requests: readonly RecordedRequest[];
  readonly uiLink?: string;
}

const SHOWN_FIELDS = ['logicalCallId', 'decision', 'outcome', 'receipt', 'reason', 'ttlMs'] as const;

export async function loadRunPage(
  deps: ConsoleDeps,
  session: Session,
  workflowId: string,
  runId?: string,
): Promise<RunPage | Refusal> {
  const as = <T>(fn: () => Promise<T>, ms?: number): Promise<T> => asPerson(deps.temporal, session.token, fn, ms);
  let d: WorkflowExecutionDescription;
  try {
    d = await as(() => deps.temporal.client.workflow.getHandle(workflowId, runId).describe());
  } catch (err) {
    return refusalOf(err);
  }
  if (!isRunOfTenant(d, session.person.tenant))
    return refusal(404, ConsoleRefusal.NotInTenant, `no agent run ${workflowId} in tenant ${session.person.tenant}`);
  const handle = deps.temporal.client.workflow.getHandle(workflowId, d.runId);
  const open = d.status.name === 'RUNNING';
  let ledger: LedgerSnapshot | undefined;
  let ledgerProblem: string | undefined;
  let pending: readonly PendingApproval[] = [];
  try {
    [ledger, pending] = await as(() =>
      Promise.all([handle.query(ledgerQuery), open ? handle.query(pendingApprovalsQuery) : Promise.resolve([])]),
    );
  } catch (err) {
    ledgerProblem = `${refusalOf(err).message} (the ledger is answered by a worker replaying the history)`;
  }
  const evidence = await closedRunEvidence(deps, session.token, workflowId, d.runId, !open).catch(() => undefined);
  const unsettled = closedWithoutSettling(d.status.name);
  const standing =
    unsettled && evidence
      ? await Promise.all(
          standingEffects(evidence, deps.tools).map(async (effect) => {
            const s = await settlementOf(deps, session.token, d.runId, effect.intent.logicalCallId);
            const settled = !!s && !s.running && !!s.result && s.result.outcome !== 'left';
            const note = !s
              ? undefined
              : s.running
                ? 'a settlement is running'
                : s.result
                  ? `${s.result.outcome} (by ${s.result.actor.principalId}: ${s.result.reason}): ${s.result.detail}`
                  : `last settlement ${s.failed ?? 'failed'}`;
            return { effect, settled, ...(note ? { note } : {}) };
          }),
        )
      : [];
  const requests = (evidence?.updates ?? []).map((u) => {
    const input = (u.input ?? {}) as Record<string, unknown>;
    const fields = Object.fromEntries(
      SHOWN_FIELDS.filter((k) => input[k] !== undefined).map((k) => [k, String(input[k]).slice(0, 300)]),
    );
    return { name: u.name, fields };
  });
  const uiLink = temporalUiLink(deps.temporal, workflowId, d.runId);
  return {
    workflowId,
    runId: d.runId,
    status: d.status.name,
    open,
    taskQueue: d.taskQueue,
    tenant: session.person.tenant,
    principal: String(d.typedSearchAttributes.get(SA.principal) ?? ledger?.projection.principalId ?? '?'),
    startTime: d.startTime.toISOString(),
    ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    ...(ledger ? { ledger } : {}),
    ...(ledgerProblem ? { ledgerProblem } : {}),
    pending,
    rows: ledger ? timeline(ledger.events) : [],
    calls: ledger ? callRows(ledger.events, ledger.projection) : [],
    standing,
    requests,
    ...(uiLink ? { uiLink } : {}),
  };
}
