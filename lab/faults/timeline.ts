/**
 * What happened during one case, in order: processes started, crash points hit, signals sent, faults fired.
 * It drives the runner (drivers wait for events) and explains the case in the report; metrics never come from
 * it (they come from durable records, see evidence.ts), except `faults_fired`, which says whether the planned
 * fault really happened.
 */

import type { LedgerMark } from './workflows/hook';

export type TimelineKind =
  | 'worker_started'
  | 'worker_exited'
  | 'crash_point_hit'
  | 'crash_point'
  | 'crash_point_resumed'
  | 'worker_killed'
  | 'worker_paused'
  | 'worker_resumed'
  | 'fault_armed'
  | 'fault_fired'
  | 'server_restarted'
  | 'policy_published'
  | 'approval_decided'
  | 'probe_sent'
  | 'note';

export interface TimelineEvent {
  /** Milliseconds since the case started. */
  readonly t: number;
  readonly kind: TimelineKind;
  readonly text: string;
  readonly pid?: number;
  readonly point?: string;
  readonly action?: string;
  readonly hit?: number;
  /** The tool a transport fault acted on. */
  readonly tool?: string;
  readonly signal?: string | null;
  /** A workflow crash point's ledger, as the worker held it there. */
  readonly ledger?: LedgerMark;
}

type Waiter = { readonly match: (e: TimelineEvent) => boolean; readonly resolve: (e: TimelineEvent) => void };

/** An append-only event list that callers can wait on. */
export class Timeline {
  private readonly list: TimelineEvent[] = [];
  private waiters: Waiter[] = [];
  private readonly start = Date.now();

  constructor(private readonly onEvent: (e: TimelineEvent) => void = () => undefined) {}

  get events(): readonly TimelineEvent[] {
    return this.list;
  }

  /** Records an event (the time is filled in) and wakes the waiters it matches. */
  push(event: Omit<TimelineEvent, 't'>): TimelineEvent {
    const e: TimelineEvent = { t: Date.now() - this.start, ...event };
    this.list.push(e);
    this.onEvent(e);
    const woken = this.waiters.filter((w) => w.match(e));
    this.waiters = this.waiters.filter((w) => !w.match(e));
    for (const w of woken) w.resolve(e);
    return e;
  }

  /** The first event (past or future) that matches; undefined after `timeoutMs` or once `signal` aborts. */
  waitFor(
    match: (e: TimelineEvent) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<TimelineEvent | undefined> {
    const past = this.list.find(match);
    if (past) return Promise.resolve(past);
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const give = (e: TimelineEvent | undefined): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(e);
      };
      const onAbort = (): void => give(undefined);
      const waiter: Waiter = { match, resolve: give };
      const timer = setTimeout(() => give(undefined), timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Events of one kind. */
  ofKind(kind: TimelineKind): TimelineEvent[] {
    return this.list.filter((e) => e.kind === kind);
  }
}
