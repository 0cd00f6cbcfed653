/**
 * The inbox: every pending approval and UNKNOWN call of the person's tenant, and every effect a closed run left
 * standing (abandoned.ts). Live runs are found by their search attributes (`LedgerloopTenant`,
 * `LedgerloopPendingApprovals`, `LedgerloopUnknownCalls`), then each run's `pendingApprovals` and `ledger` queries
 * say which calls wait, for what, since when. A run's details are reused while its attributes stay the same; past
 * DETAIL_MAX_AGE_MS they are asked again, at most REVALIDATE_PER_REFRESH runs per refresh (the stalest first), so
 * a live inbox of a thousand runs does not query a thousand runs every second.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { LedgerEvent } from '../src/domain/ledger-events';
import type { VerifiedIdentity } from '../src/domain/verified-identity';
import { SA } from '../src/domain/search-attributes';
import type { LedgerSnapshot } from '../workflows/ledger';
import { ledgerQuery, pendingApprovalsQuery, type PendingApproval } from '../workflows/definitions';
import { abandonedItems } from './abandoned';
import { runsOfTenantQuery } from './ledgerloop-runs';
import { amountInLedger, amountInSummary, deadlineOf, firstAt, mapLimit } from './call-facts';
import { DETAIL_MAX_AGE_MS, QUERY_CONCURRENCY, REVALIDATE_PER_REFRESH, type ConsoleDeps } from './config';
import { abilitiesOf, mayList, offeredActions, readPolicy, type ItemKind } from './roles';
import { asPerson } from './temporal';

export interface InboxItem {
  /** Stable across refreshes: kind, run and call. */
  readonly key: string;
  readonly kind: ItemKind;
  readonly workflowId: string;
  readonly runId: string;
  readonly logicalCallId: string;
  readonly tool: string;
  readonly summary: string;
  readonly amount?: string;
  readonly principal: string;
  /** Since when it waits (ISO): the approval request, the call marked UNKNOWN, or the run's close. */
  readonly since: string;
  /** When it stops being actionable (ISO): the run's deadline for a live run. */
  readonly expiresAt?: string;
  readonly argumentsHash?: string;
  readonly policyVersion?: string;
  readonly operationKey?: string;
  /** A closed run's effect: how the run closed, the effect's state, and what a settlement said. */
  readonly closedAs?: string;
  readonly state?: string;
  readonly note?: string;
  readonly actions: readonly string[];
}

export interface Inbox {
  readonly items: readonly InboxItem[];
  /** What could not be read (a run no worker answered for): said on the page, never dropped silently. */
  readonly problems: readonly string[];
}

/** A visibility query names the tenant in quotes: a tenant that needs escaping is refused instead. */
export const safeTenant = (t: string): boolean => /^[A-Za-z0-9_.:@-]{1,200}$/.test(t);

type Detail = { readonly at: number; readonly sig: string; readonly items: readonly Omit<InboxItem, 'actions'>[] };
const details = new Map<string, Detail>();

/** Forget every run's cached details (the bench measures a cold inbox). */
export function forgetInboxDetails(): void {
  details.clear();
}

function signature(w: WorkflowExecutionInfo): string {
  const a = w.typedSearchAttributes;
  return `${a.get(SA.pendingApprovals) ?? 0}/${a.get(SA.unknownCalls) ?? 0}/${a.get(SA.status) ?? ''}`;
}

function liveItems(
  w: WorkflowExecutionInfo,
  pending: readonly PendingApproval[],
  snap: LedgerSnapshot,
): Omit<InboxItem, 'actions'>[] {
  const events: readonly LedgerEvent[] = snap.events;
  const base = {
    workflowId: w.workflowId,
    runId: w.runId,
    principal: snap.projection.principalId ?? String(w.typedSearchAttributes.get(SA.principal) ?? '?'),
  };
  const expiresAt = deadlineOf(events);
  const exp = expiresAt ? { expiresAt } : {};
  const approvals = pending.map((p) => {
    const amount = amountInSummary(p.summary);
    return {
      ...base,
      ...exp,
      key: `approval/${w.workflowId}/${w.runId}/${p.logicalCallId}`,
      kind: 'approval' as const,
      logicalCallId: p.logicalCallId,
      tool: p.toolName,
      summary: p.summary,
      ...(amount ? { amount } : {}),
      since: firstAt(events, 'ApprovalRequested', p.logicalCallId) ?? p.requestedAt,
      argumentsHash: p.argumentsHash,
      policyVersion: p.policyVersion,
    };
  });
  const unknown = Object.values(snap.projection.calls)
    .filter((c) => c.state === 'UNKNOWN')
    .map((c) => {
      const amount = amountInLedger(events, c.logicalCallId);
      return {
        ...base,
        ...exp,
        key: `unknown/${w.workflowId}/${w.runId}/${c.logicalCallId}`,
        kind: 'unknown' as const,
        logicalCallId: c.logicalCallId,
        tool: c.toolName,
        summary: `${c.toolName}${amount ? ` ${amount}` : ''}`,
        ...(amount ? { amount } : {}),
        since: firstAt(events, 'ToolOutcomeMarkedUnknown', c.logicalCallId) ?? w.startTime.toISOString(),
        ...(c.operationKey ? { operationKey: c.operationKey } : {}),
        ...(c.argumentsHash ? { argumentsHash: c.argumentsHash } : {}),
        state: 'UNKNOWN',
      };
    });
  return [...approvals, ...unknown];
}

/** The live runs of `tenant` that wait for a person, as visibility lists them. */
export async function listWaitingRuns(
  deps: ConsoleDeps,
  token: string,
  tenant: string,
): Promise<WorkflowExecutionInfo[]> {
  const query = runsOfTenantQuery(
    tenant,
    `ExecutionStatus = 'Running' AND (LedgerloopPendingApprovals > 0 OR LedgerloopUnknownCalls > 0)`,
  );
  return asPerson(
    deps.temporal,
    token,
    async () => {
      const runs: WorkflowExecutionInfo[] = [];
      for await (const w of deps.temporal.client.workflow.list({ query, pageSize: 1000 })) runs.push(w);
      return runs;
    },
    30_000,
  );
}

export async function collectInbox(deps: ConsoleDeps, person: VerifiedIdentity, token: string): Promise<Inbox> {
  if (!safeTenant(person.tenant))
    return { items: [], problems: [`tenant ${person.tenant.slice(0, 50)} cannot be searched`] };
  const problems: string[] = [];
  const runs = await listWaitingRuns(deps, token, person.tenant);
  const now = Date.now();
  // New or changed runs are queried; unchanged ones reuse their details, and the stalest few are asked again, so
  // one refresh never queries every run of a large inbox.
  const stale = runs
    .filter((w) => {
      const c = details.get(w.runId);
      return c !== undefined && c.sig === signature(w) && now - c.at >= DETAIL_MAX_AGE_MS;
    })
    .sort((a, b) => details.get(a.runId)!.at - details.get(b.runId)!.at)
    .slice(0, REVALIDATE_PER_REFRESH);
  const ask = new Set(
    [...runs.filter((w) => details.get(w.runId)?.sig !== signature(w)), ...stale].map((w) => w.runId),
  );
  const perRun = await mapLimit(runs, QUERY_CONCURRENCY, async (w) => {
    const cached = details.get(w.runId);
    if (cached && !ask.has(w.runId)) return cached.items;
    const sig = signature(w);
    try {
      const handle = deps.temporal.client.workflow.getHandle(w.workflowId, w.runId);
      const [pending, snap] = await asPerson(deps.temporal, token, () =>
        Promise.all([handle.query(pendingApprovalsQuery), handle.query(ledgerQuery)]),
      );
      const items = liveItems(w, pending, snap);
      details.set(w.runId, { at: Date.now(), sig, items });
      return items;
    } catch (err) {
      problems.push(`${w.workflowId}: ${(err as Error).message.slice(0, 200)}`);
      return cached?.items ?? [];
    }
  });
  for (const id of details.keys()) if (!runs.some((r) => r.runId === id)) details.delete(id);
  const closed = await abandonedItems(deps, person.tenant, token).catch((err: unknown) => {
    problems.push(`closed runs: ${(err as Error).message.slice(0, 200)}`);
    return [];
  });
  const abilities = abilitiesOf(person, readPolicy(deps.policies), deps.viewerRoles);
  const items = [...perRun.flat(), ...closed]
    .filter((i) => mayList(i.kind, i.principal, person, abilities))
    .map((i) => ({ ...i, actions: offeredActions(i.kind, abilities) }));
  return { items, problems };
}

export type SortOrder = 'oldest' | 'newest';

export function sortItems(items: readonly InboxItem[], order: SortOrder): InboxItem[] {
  const sign = order === 'oldest' ? 1 : -1;
  return [...items].sort((a, b) => sign * (Date.parse(a.since) - Date.parse(b.since)) || a.key.localeCompare(b.key));
}
