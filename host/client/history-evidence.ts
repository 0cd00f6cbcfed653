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

/** Reads the evidence out of a history, decoding payloads with `converter` (the project's codecs). */
export async function historyEvidence(history: History, converter: LoadedDataConverter): Promise<HistoryEvidence> {
  const bySchedule = new Map<string, Mutable<ActivityEvidence>>();
  const activities: Mutable<ActivityEvidence>[] = [];
  const updates: UpdateEvidence[] = [];
  const events = history.events ?? [];
  const decode = async (target: { decodeError?: string }, payloads: Payloads | null | undefined): Promise<unknown> => {
    try {
      return await firstArg(converter, payloads);
    } catch (err) {
      target.decodeError = (err as Error).message;
      return undefined;
    }
  };
  for (const e of events) {
    const id = String(e.eventId ?? '');
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const a: Mutable<ActivityEvidence> = {
        activityType: scheduled.activityType?.name ?? '',
        activityId: scheduled.activityId ?? '',
      };
      a.input = await decode(a, scheduled.input);
      bySchedule.set(id, a);
      activities.push(a);
      continue;
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const a = bySchedule.get(String(started.scheduledEventId ?? ''));
      if (a) {
        if (started.identity) a.startedIdentity = started.identity;
        if (started.attempt) a.attempt = started.attempt;
      }
      continue;
    }
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) {
      const a = bySchedule.get(String(completed.scheduledEventId ?? ''));
      if (a) {
        a.closedAs = 'completed';
        a.result = await decode(a, completed.result);
        if (!a.startedIdentity && completed.identity) a.startedIdentity = completed.identity;
      }
      continue;
    }
    const closed: Array<[ActivityClose, { scheduledEventId?: unknown } | null | undefined]> = [
      ['failed', e.activityTaskFailedEventAttributes],
      ['timed_out', e.activityTaskTimedOutEventAttributes],
      ['canceled', e.activityTaskCanceledEventAttributes],
    ];
    for (const [how, attrs] of closed) {
      const a = attrs ? bySchedule.get(String(attrs.scheduledEventId ?? '')) : undefined;
      if (a) a.closedAs = how;
    }
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted) {
      const req = accepted.acceptedRequest;
      const u: Mutable<UpdateEvidence> = {
        name: req?.input?.name ?? '',
        updateId: req?.meta?.updateId ?? accepted.protocolInstanceId ?? '',
      };
      u.input = await decode(u, req?.input?.args);
      updates.push(u);
    }
  }
  return { activities, updates, eventCount: events.length };
}
