/**
 * Figures read from a Temporal history, the durable record: how many attempts each activity type took.
 * An activity's retries are not separate events; the ActivityTaskStarted event written when the activity
 * closes carries the attempt number that closed it.
 */
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;

export interface ActivityAttempts {
  readonly activityType: string;
  readonly activityId: string;
  readonly attempts: number;
}

function id(v: unknown): string {
  return v === null || v === undefined ? '' : String(v);
}

export function activityAttempts(history: History): ActivityAttempts[] {
  const scheduled = new Map<string, { activityType: string; activityId: string }>();
  const out: ActivityAttempts[] = [];
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(id(e.eventId), { activityType: s.activityType?.name ?? '', activityId: s.activityId ?? '' });
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const sched = scheduled.get(id(started.scheduledEventId));
      if (sched) out.push({ ...sched, attempts: started.attempt ?? 1 });
    }
  }
  return out;
}

/** Total attempts of one activity type across the run (e.g. `dispatchTool`). */
export function attemptCount(history: History, activityType: string): number {
  return activityAttempts(history)
    .filter((a) => a.activityType === activityType)
    .reduce((n, a) => n + a.attempts, 0);
}
