/**
 * The outbox's relay: it sends a claimed row, exactly as the row holds it (its canonical arguments, its key, its
 * intent time), through the downstream's own transport (a vendor HTTP API sends the key in its `Idempotency-Key`
 * header), and records what came back on the row. It decides nothing about repeats: it only ever sends a row that
 * the fenced claim (outbox-store.ts, in either store) handed it, and the recovery table decided before that whether an attempt may send.
 */
import type { SendOutcome } from '../classify';
import type { AttemptCall, Transport } from '../transport';
import type { OutboxRecord, OutboxRow, OutboxStore } from './outbox-store';

/** What a send's outcome leaves on the row: only a sent-and-not-answered outcome is `unknown`. */
export function recordOf(outcome: SendOutcome): OutboxRecord {
  switch (outcome.kind) {
    case 'ok':
      return {
        status: 'answered',
        outcome: { status: outcome.status, body: outcome.body },
        ...(outcome.receipt !== undefined ? { receipt: outcome.receipt } : {}),
      };
    case 'rejected':
      return {
        status: 'rejected',
        outcome: {
          status: outcome.status,
          code: outcome.code,
          ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
          body: outcome.body,
        },
      };
    case 'unavailable':
      // Proven not to have reached the downstream: the row may be claimed and sent again.
      return { status: 'pending', outcome: { reason: outcome.reason } };
    case 'in_progress':
      return { status: 'unknown', outcome: { reason: 'another request under the key is in flight' } };
    case 'response_lost':
      return { status: 'unknown', outcome: { reason: outcome.reason } };
  }
}

/** The outcome a settled row replays: the downstream's recorded answer, marked replayed. */
export function replayOf(row: OutboxRow): SendOutcome {
  const o = (row.outcome ?? {}) as { status?: number; body?: unknown; code?: string; reason?: string };
  if (row.status === 'answered')
    return {
      kind: 'ok',
      status: o.status ?? 200,
      body: o.body ?? null,
      replayed: true,
      ...(row.receipt !== null ? { receipt: row.receipt } : {}),
    };
  return {
    kind: 'rejected',
    status: o.status ?? 400,
    code: o.code ?? 'Downstream.Rejected',
    ...(o.reason !== undefined ? { reason: o.reason } : {}),
    body: o.body ?? null,
  };
}

/**
 * Sends `row` (claimed by `call.fence`) through `downstream` and records the outcome. The outcome is returned even
 * when recording it fails: the row then stays `sending`, which a later lookup asks the downstream about.
 */
export async function relayRow(
  outbox: OutboxStore,
  downstream: Transport,
  row: OutboxRow,
  call: AttemptCall,
): Promise<SendOutcome> {
  const outcome = await downstream.send({ ...call, body: row.body, key: row.key, intentAt: row.intentAt });
  // A record that fails has nothing to undo: the row stays `sending`, and a later lookup asks the downstream.
  await outbox.record(row.tenant, row.key, call.fence, recordOf(outcome)).catch(() => undefined);
  return outcome;
}
