/**
 * The tools a recorded agent run used, read from its history before it is replayed: a replay against a bundle that
 * lacks one of them cannot take the path the run took (the bundle refuses the proposal as an unknown tool and
 * plans again where the history dispatched), and the SDK reports that as a determinism error naming activities,
 * not tools. With the names read first, a replay tool refuses such a history with `ReplayToolsMissingError`,
 * naming the tools.
 *
 * A tool counts as used when the worker that recorded the run knew it:
 * - it was dispatched or reconciled (the `dispatchTool` and `reconcileCall` inputs name it in `intent.toolName`);
 * - the model was told how a call of it went (a `planTurn` input's observations), unless what it was told is that
 *   no such tool exists (`Proposal.UnknownTool`): the recording worker did not know that one either.
 *
 * Payloads are decoded with the given data converter; a payload this process cannot decode (another key) is
 * skipped, so the check never refuses a history for what it cannot read.
 */
import { defaultPayloadConverter, type DataConverter, type LoadedDataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Failure } from '../../src/domain/failures';

type Payload = temporal.api.common.v1.IPayload;

async function firstInput(
  payloads: readonly Payload[],
  dataConverter: DataConverter | LoadedDataConverter | undefined,
): Promise<unknown> {
  let decoded = [...payloads];
  for (const codec of [...(dataConverter?.payloadCodecs ?? [])].reverse())
    decoded = (await codec.decode(decoded)) as Payload[];
  const first = decoded[0];
  if (first === undefined) return undefined;
  return defaultPayloadConverter.fromPayload(first as Parameters<typeof defaultPayloadConverter.fromPayload>[0]);
}

function toolOfIntent(input: unknown): string | undefined {
  const name = (input as { intent?: { toolName?: unknown } } | null)?.intent?.toolName;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

function toolsOfObservations(input: unknown): string[] {
  const observations = (input as { observations?: unknown } | null)?.observations;
  if (!Array.isArray(observations)) return [];
  return observations.flatMap((o: { toolName?: unknown; error?: { code?: unknown } } | null) =>
    typeof o?.toolName === 'string' && o.toolName !== '' && o.error?.code !== Failure.ProposalUnknownTool
      ? [o.toolName]
      : [],
  );
}

/** The names of the tools the run recorded in `history` used, sorted. */
export async function toolsOfHistory(
  history: temporal.api.history.v1.IHistory,
  dataConverter?: DataConverter | LoadedDataConverter,
): Promise<string[]> {
  const tools = new Set<string>();
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    const type = a?.activityType?.name;
    if (type !== 'dispatchTool' && type !== 'reconcileCall' && type !== 'planTurn') continue;
    let input: unknown;
    try {
      input = await firstInput((a?.input?.payloads ?? []) as Payload[], dataConverter);
    } catch {
      continue; // encrypted with a key this process does not have
    }
    if (type === 'planTurn') for (const t of toolsOfObservations(input)) tools.add(t);
    else {
      const t = toolOfIntent(input);
      if (t !== undefined) tools.add(t);
    }
  }
  return [...tools].sort();
}

/** A history used tools the workflow bundle does not have: replaying it would only report a determinism error. */
export class ReplayToolsMissingError extends Error {
  override readonly name = 'Replay.ToolsMissing';
  constructor(
    readonly missing: readonly string[],
    readonly available: readonly string[],
    readonly toolsModule: string,
  ) {
    super(
      `the history used ${missing.length === 1 ? 'a tool' : 'tools'} the bundle lacks: ${missing.join(', ')} (the bundle's tools, from ${toolsModule}: ${available.join(', ') || 'none'}); replay it with the tools module its worker ran (--config, or the project's tools)`,
    );
  }
}

/** Throws ReplayToolsMissingError when `history` used a tool `available` lacks. */
export async function checkHistoryTools(
  history: temporal.api.history.v1.IHistory,
  available: readonly string[],
  toolsModule: string,
  dataConverter?: DataConverter | LoadedDataConverter,
): Promise<void> {
  const have = new Set(available);
  const missing = (await toolsOfHistory(history, dataConverter)).filter((t) => !have.has(t));
  if (missing.length > 0) throw new ReplayToolsMissingError(missing, [...available].sort(), toolsModule);
}
