/**
 * The console's Temporal client, and the one function every call made for a signed-in person goes through: it
 * carries that person's identity token as gRPC metadata (`authorization: Bearer <token>`), so a frontend that
 * authorizes per caller sees who asks, and a frontend that does not is unaffected. It also bounds the call: a
 * query no worker answers must not hold a page.
 */
import type { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';

export interface ConsoleTemporal {
  readonly client: Client;
  readonly connection: Connection;
  readonly namespace: string;
  /** The client's payload codecs (undefined: plain payloads); histories are decoded with the same. */
  readonly dataConverter?: DataConverter;
  /** The Temporal Web UI's base URL, for "open in the Temporal UI" links (none: no link). */
  readonly uiUrl?: string;
}

/** How long a query, a list or a describe may take before the console reports that nobody answered. */
export const CALL_DEADLINE_MS = 5_000;

/** The metadata a call on behalf of a person carries. */
export function personMetadata(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Runs `fn` (Temporal calls on `t`'s connection) as the person whose token this is, within `deadlineMs`. */
export function asPerson<T>(
  t: Pick<ConsoleTemporal, 'connection'>,
  token: string,
  fn: () => Promise<T>,
  deadlineMs = CALL_DEADLINE_MS,
): Promise<T> {
  return t.connection.withMetadata(personMetadata(token), () => t.connection.withDeadline(Date.now() + deadlineMs, fn));
}

/** The Temporal UI's page of one run, when the console knows where the UI is. */
export function temporalUiLink(t: ConsoleTemporal, workflowId: string, runId?: string): string | undefined {
  if (!t.uiUrl) return undefined;
  const base = `${t.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(t.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
