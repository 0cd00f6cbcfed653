/**
 * The margin below which a decision is not worth sending on: a capability or an approval that lapses within it
 * could expire on the wire. Pure (workflow-safe): the evaluator, the dispatch activity and the services share it.
 */
export const SEND_MARGIN_MS = 1_000;

/** Whether a decision expiring at `expiresAt` lapses before it could safely be sent at `nowMs`. */
export function lapsesBeforeSend(expiresAt: string | undefined, nowMs: number): boolean {
  return expiresAt === undefined || Date.parse(expiresAt) - SEND_MARGIN_MS <= nowMs;
}
