/**
 * Whether a run's history holds an identity token anyone who can read the namespace can read: every payload in the
 * history (start input, update and signal arguments, results, memo, headers) is looked at as it was written. One that
 * is not `binary/encrypted` and whose bytes hold a compact JWS is a finding; so is a JWS anywhere else in the
 * history's bytes. An encrypted payload is opaque here, as it is in the Temporal UI without the codec server.
 *
 * `scripts/check-history-tokens.ts` runs it on the runs a first hour leaves (scripts/first-hour.sh, the scaffold's
 * printed commands in scripts/check-package.sh).
 */
import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;

/** A compact JWS: three base64url segments, the header beginning `{"` (eyJ). */
const JWS_ALL = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g;

export interface TokenFinding {
  /** The event the payload is in (its id and type), or `history` for bytes outside any payload. */
  readonly where: string;
  /** The payload's encoding, e.g. `json/plain`. */
  readonly encoding: string;
}

export interface HistoryTokenReport {
  readonly events: number;
  /** Payloads seen, by encoding. */
  readonly payloads: Readonly<Record<string, number>>;
  readonly findings: readonly TokenFinding[];
}

interface PayloadLike {
  readonly metadata?: Record<string, Uint8Array | null> | null;
  readonly data?: Uint8Array | null;
}

const isPayload = (v: unknown): v is PayloadLike =>
  typeof v === 'object' &&
  v !== null &&
  'data' in v &&
  'metadata' in v &&
  (v as PayloadLike).data instanceof Uint8Array;

function* payloadsIn(value: unknown, seen = new Set<unknown>()): Generator<PayloadLike> {
  if (typeof value !== 'object' || value === null || seen.has(value) || value instanceof Uint8Array) return;
  seen.add(value);
  if (isPayload(value)) {
    yield value;
    return;
  }
  for (const v of Array.isArray(value) ? value : Object.values(value)) yield* payloadsIn(v, seen);
}

const text = (b: Uint8Array | null | undefined): string => (b ? Buffer.from(b).toString('latin1') : '');

/**
 * The report for one history. `encode` gives the history's protobuf bytes (for the search outside payloads); the
 * caller passes `temporal.api.history.v1.History.encode(h).finish()`.
 */
export function tokensInClear(history: History, bytes?: Uint8Array): HistoryTokenReport {
  const payloads: Record<string, number> = {};
  const findings: TokenFinding[] = [];
  let inPayloads = 0;
  for (const event of history.events ?? []) {
    const type = event.eventType == null ? '?' : (temporal.api.enums.v1.EventType[event.eventType] ?? event.eventType);
    const where = `event ${String(event.eventId)} (${String(type).replace(/^EVENT_TYPE_/, '')})`;
    for (const p of payloadsIn(event)) {
      const encoding = text(p.metadata?.['encoding']) || '(none)';
      payloads[encoding] = (payloads[encoding] ?? 0) + 1;
      if (encoding === 'binary/encrypted') continue;
      const found = text(p.data).match(JWS_ALL)?.length ?? 0;
      if (found > 0) {
        findings.push({ where, encoding });
        inPayloads += found;
      }
    }
  }
  // Anything the walk above did not see (a field that is not a payload) still shows in the raw bytes.
  if (bytes !== undefined) {
    const all = text(bytes).match(JWS_ALL)?.length ?? 0;
    if (all > inPayloads) findings.push({ where: 'history', encoding: '(outside a payload)' });
  }
  return { events: history.events?.length ?? 0, payloads, findings };
}
