/**
 * The workflow id a recorded history ran under. A history (as the Temporal CLI, the Web UI or `fetchHistory`
 * exports it) does not carry its own workflow id, but an agent run's ids derive from it (the business run id is
 * part of every logical call id and operation key), so a replay under another id computes other ids and an
 * update that named a call (an approval, an operator resolution) no longer finds it. The agent run passes its
 * run id to the model on every turn: the first `planTurn` activity's input says which id the run had.
 */
import { defaultPayloadConverter, type DataConverter, type LoadedDataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

type Payload = temporal.api.common.v1.IPayload;

export async function workflowIdOfHistory(
  history: temporal.api.history.v1.IHistory,
  dataConverter?: DataConverter | LoadedDataConverter,
): Promise<string | undefined> {
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'planTurn') continue;
    let payloads = (a.input?.payloads ?? []) as Payload[];
    try {
      for (const codec of [...(dataConverter?.payloadCodecs ?? [])].reverse())
        payloads = (await codec.decode(payloads)) as Payload[];
      const first = payloads[0];
      if (first === undefined) return undefined;
      const value = defaultPayloadConverter.fromPayload(
        first as Parameters<typeof defaultPayloadConverter.fromPayload>[0],
      );
      const runId = (value as { runId?: unknown } | null)?.runId;
      return typeof runId === 'string' && runId.length > 0 ? runId : undefined;
    } catch {
      return undefined; // encrypted with a key this process does not have, or not an agent run's planTurn
    }
  }
  return undefined;
}
