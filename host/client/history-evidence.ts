/**
 * What the raw Temporal history says on its own, independent of the workflow's ledger: every activity's decoded
 * input and result, the identity and attempt Temporal recorded when a worker started it, and every accepted
 * Update's decoded arguments. `ledgerloop audit` cross-checks the ledger against this.
 */
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
type Payloads = temporal.api.common.v1.IPayloads;

/** How an activity ended in the history (undefined: still open). */
export type ActivityClose = 'completed' | 'failed' | 'timed_out' | 'canceled';

export interface ActivityEvidence {
  readonly activityType: string;
  readonly activityId: string;
  /** The first argument as decoded from ActivityTaskScheduled.input (undefined when absent or undecodable). */
  readonly input?: unknown;
  /** The value decoded from ActivityTaskCompleted.result. */
  readonly result?: unknown;
  /** ActivityTaskStarted.identity: the worker Temporal handed the (last) attempt to. */
  readonly startedIdentity?: string;
  /** ActivityTaskStarted.attempt: the attempt that closed the activity. */
  readonly attempt?: number;
  readonly closedAs?: ActivityClose;
  /** Why a payload could not be decoded (e.g. no codec key for it). */
  readonly decodeError?: string;
}

export interface UpdateEvidence {
  readonly name: string;
  readonly updateId: string;
  /** The first argument as decoded from WorkflowExecutionUpdateAccepted.acceptedRequest.input.args. */
  readonly input?: unknown;
  readonly decodeError?: string;
}

export interface HistoryEvidence {
  readonly activities: readonly ActivityEvidence[];
  readonly updates: readonly UpdateEvidence[];
  readonly eventCount: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

async function firstArg(converter: LoadedDataConverter, payloads: Payloads | null | undefined): Promise<unknown> {
  if (!payloads?.payloads?.length) return undefined;
  const values = await decodeArrayFromPayloads(converter, payloads.payloads);
  return values[0];
}

type HistoryEvent = NonNullable<History['events']>[number];

/** The evidence gathered so far, by scheduled event id, and how a payload is decoded (a failure noted, not thrown). */
interface Reading {
  readonly bySchedule: Map<string, Mutable<ActivityEvidence>>;
  readonly activities: Mutable<ActivityEvidence>[];
  readonly updates: UpdateEvidence[];
  decode(target: { decodeError?: string }, payloads: Payloads | null | undefined): Promise<unknown>;
}

/** An activity's scheduling, start or completion joins its evidence (with its input, worker, attempt, result). */
async function readActivityProgress(e: HistoryEvent, r: Reading): Promise<void> {
  const scheduled = e.activityTaskScheduledEventAttributes;
  if (scheduled) {
    const a: Mutable<ActivityEvidence> = {
      activityType: scheduled.activityType?.name ?? '',
      activityId: scheduled.activityId ?? '',
    };
    a.input = await r.decode(a, scheduled.input);
    r.bySchedule.set(String(e.eventId ?? ''), a);
    r.activities.push(a);
  }
  const started = e.activityTaskStartedEventAttributes;
  const startedOf = started && r.bySchedule.get(String(started.scheduledEventId ?? ''));
  if (started && startedOf) {
    if (started.identity) startedOf.startedIdentity = started.identity;
    if (started.attempt) startedOf.attempt = started.attempt;
  }
  const completed = e.activityTaskCompletedEventAttributes;
  const completedOf = completed && r.bySchedule.get(String(completed.scheduledEventId ?? ''));
  if (completed && completedOf) {
    completedOf.closedAs = 'completed';
    completedOf.result = await r.decode(completedOf, completed.result);
    if (!completedOf.startedIdentity && completed.identity) completedOf.startedIdentity = completed.identity;
  }
}

/** How an activity closed other than completed: failed, timed out or cancelled. */
function readActivityClose(e: HistoryEvent, r: Reading): void {
  const closed: Array<[ActivityClose, { scheduledEventId?: unknown } | null | undefined]> = [
    ['failed', e.activityTaskFailedEventAttributes],
    ['timed_out', e.activityTaskTimedOutEventAttributes],
    ['canceled', e.activityTaskCanceledEventAttributes],
  ];
  for (const [how, attrs] of closed) {
    const a = attrs ? r.bySchedule.get(String(attrs.scheduledEventId ?? '')) : undefined;
    if (a) a.closedAs = how;
  }
}

/** An accepted update, with its first argument. */
async function readUpdate(e: HistoryEvent, r: Reading): Promise<void> {
  const accepted = e.workflowExecutionUpdateAcceptedEventAttributes;
  if (!accepted) return;
  const req = accepted.acceptedRequest;
  const u: Mutable<UpdateEvidence> = {
    name: req?.input?.name ?? '',
    updateId: req?.meta?.updateId ?? accepted.protocolInstanceId ?? '',
  };
  u.input = await r.decode(u, req?.input?.args);
  r.updates.push(u);
}

/** Reads the evidence out of a history, decoding payloads with `converter` (the project's codecs). */
export async function historyEvidence(history: History, converter: LoadedDataConverter): Promise<HistoryEvidence> {
  const r: Reading = {
    bySchedule: new Map(),
    activities: [],
    updates: [],
    async decode(target, payloads) {
      try {
        return await firstArg(converter, payloads);
      } catch (err) {
        target.decodeError = (err as Error).message;
        return undefined;
      }
    },
  };
  const events = history.events ?? [];
  for (const e of events) {
    await readActivityProgress(e, r);
    readActivityClose(e, r);
    await readUpdate(e, r);
  }
  return { activities: r.activities, updates: r.updates, eventCount: events.length };
}
