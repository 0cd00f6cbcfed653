/** What the console says about one call: its one-line summary and amount, from the tool's own declaration. */
import pLimit from 'p-limit';
import type { Json } from '../src/domain/canonical';
import { formatMoney } from '../src/domain/money';
import type { LedgerEvent } from '../src/domain/ledger-events';
import type { ToolRegistry } from '../src/tools/registry';

export interface CallFacts {
  readonly summary: string;
  readonly amount?: string;
}

/** From the canonical body a dispatch sent: the tool's summary and the amount its authorization names. */
export function factsFromBody(tools: ToolRegistry, toolName: string, body: Json, principalId: string): CallFacts {
  const tool = tools.get(toolName);
  const record = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
  const { tenant, ...fields } = record as Record<string, unknown>;
  const parsed = tool?.args.safeParse(fields);
  if (!tool || !parsed?.success) return { summary: toolName };
  const auth = tool.authorization(parsed.data, { tenant: String(tenant ?? ''), principalId });
  return {
    summary: tool.summary(parsed.data),
    ...(auth.amountMinor !== undefined && auth.currency !== undefined
      ? { amount: formatMoney({ minor: auth.amountMinor, currency: auth.currency }) }
      : {}),
  };
}

/** The amount a pending approval's summary states (tools summarize money as `formatMoney` writes it). */
export function amountInSummary(summary: string): string | undefined {
  return /-?\d+\.\d{2} [A-Z]{3}/.exec(summary)?.[0];
}

/** The amount the ledger's authorization of a call names, if any. */
export function amountInLedger(events: readonly LedgerEvent[], logicalCallId: string): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (
      (e.type === 'AuthorizationAllowed' || e.type === 'AuthorizationDenied') &&
      e.logicalCallId === logicalCallId &&
      e.amountMinor !== undefined &&
      e.currency !== undefined
    )
      return formatMoney({ minor: e.amountMinor, currency: e.currency });
  }
  return undefined;
}

/** When the ledger first recorded an event of `type` for the call (its ledger time). */
export function firstAt(
  events: readonly LedgerEvent[],
  type: LedgerEvent['type'],
  logicalCallId: string,
): string | undefined {
  const e = events.find((x) => x.type === type && 'logicalCallId' in x && x.logicalCallId === logicalCallId);
  return e?.at;
}

/** The run's deadline as its RunCreated recorded it (absent for a continued run's later executions). */
export function deadlineOf(events: readonly LedgerEvent[]): string | undefined {
  const created = events.find((e) => e.type === 'RunCreated');
  return created?.type === 'RunCreated' ? created.deadlineAt : undefined;
}

/** Runs `fn` over `items` with at most `limit` at once (p-limit), keeping order. */
export function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const lane = pLimit(limit);
  return Promise.all(items.map((t) => lane(() => fn(t))));
}
