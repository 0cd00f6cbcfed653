/**
 * Figures read from a Temporal history: per-turn latency phases from the server's event timestamps, event
 * counts and encoded sizes per turn. Works for agentRun (planTurn / dispatchTool), bareLoop (barePlan /
 * bareDebit), peerLoop (peerModel / peerTool), aiSdkLoop (invokeModel / aiSdkDebit) and aiSdkGovernedLoop
 * (invokeModel / dispatchTool) alike, so every side is measured by the same code.
 */
import { temporal } from '@temporalio/proto';

export type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;

export interface LoopActivityTypes {
  readonly plan: string;
  readonly tool: string;
}

export const GOVERNED_TYPES: LoopActivityTypes = { plan: 'planTurn', tool: 'dispatchTool' };
export const BARE_TYPES: LoopActivityTypes = { plan: 'barePlan', tool: 'bareDebit' };
export const PEER_TYPES: LoopActivityTypes = { plan: 'peerModel', tool: 'peerTool' };
/** The AI SDK peer: `AiSdkPlugin`'s model activity and the tool's plain activity. */
export const AISDK_TYPES: LoopActivityTypes = { plan: 'invokeModel', tool: 'aiSdkDebit' };
/** The governed AI SDK agent: the plugin's model activity and the runtime's dispatch. */
export const AISDK_GOVERNED_TYPES: LoopActivityTypes = { plan: 'invokeModel', tool: 'dispatchTool' };
/** The model and tool activity types of each kind of loop. */
export const LOOP_TYPES: Readonly<
  Record<'governed' | 'bare' | 'peer' | 'aisdk' | 'aisdk-governed', LoopActivityTypes>
> = {
  governed: GOVERNED_TYPES,
  bare: BARE_TYPES,
  peer: PEER_TYPES,
  aisdk: AISDK_TYPES,
  'aisdk-governed': AISDK_GOVERNED_TYPES,
};

function num(v: unknown): number {
  return v === null || v === undefined ? 0 : Number(v);
}

export function eventMs(e: Event): number {
  const t = e.eventTime;
  return t ? num(t.seconds) * 1000 + num(t.nanos) / 1e6 : NaN;
}

export function eventTypeName(e: Event): string {
  const name = temporal.api.enums.v1.EventType[num(e.eventType)] ?? `EVENT_${String(e.eventType)}`;
  return name
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
}

/** Server-side timings of one turn that made a tool call (the final turn, which makes none, is left out). */
export interface TurnTiming {
  readonly turn: number;
  /** plan ActivityTaskScheduled → plan ActivityTaskCompleted: the model call as the workflow sees it. */
  readonly planMs: number;
  /** plan completed → tool ActivityTaskScheduled: everything the workflow does before dispatch. */
  readonly decideMs: number;
  /** tool ActivityTaskScheduled → ActivityTaskCompleted: the dispatch activity, all attempts. */
  readonly toolMs: number;
  /** tool completed → the next WorkflowTaskCompleted: the result recorded. */
  readonly recordMs: number;
  /** plan completed → result recorded: THE per-call latency (decide + tool + record). */
  readonly callMs: number;
  /** plan scheduled → result recorded: one whole turn. */
  readonly turnMs: number;
  readonly toolAttempts: number;
}

export function turnTimings(history: History, types: LoopActivityTypes): TurnTiming[] {
  const events = history.events ?? [];
  const kindBySchedule = new Map<number, 'plan' | 'tool'>();
  const out: TurnTiming[] = [];
  let turn = 0;
  let planScheduled = NaN;
  let planCompleted = NaN;
  let toolScheduled = NaN;
  let toolCompleted = NaN;
  let toolAttempts = 0;
  let awaitingRecord = false;
  for (const e of events) {
    const t = eventMs(e);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const name = s.activityType?.name;
      if (name === types.plan) {
        kindBySchedule.set(num(e.eventId), 'plan');
        turn += 1;
        planScheduled = t;
        planCompleted = toolScheduled = toolCompleted = NaN;
      } else if (name === types.tool) {
        kindBySchedule.set(num(e.eventId), 'tool');
        toolScheduled = t;
      }
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started && kindBySchedule.get(num(started.scheduledEventId)) === 'tool')
      toolAttempts = num(started.attempt) || 1;
    const done =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes;
    if (done) {
      const kind = kindBySchedule.get(num(done.scheduledEventId));
      if (kind === 'plan') planCompleted = t;
      if (kind === 'tool') {
        toolCompleted = t;
        awaitingRecord = true;
      }
    }
    if (awaitingRecord && e.workflowTaskCompletedEventAttributes) {
      awaitingRecord = false;
      out.push({
        turn,
        planMs: planCompleted - planScheduled,
        decideMs: toolScheduled - planCompleted,
        toolMs: toolCompleted - toolScheduled,
        recordMs: t - toolCompleted,
        callMs: t - planCompleted,
        turnMs: t - planScheduled,
        toolAttempts,
      });
    }
  }
  return out;
}

export function eventBytes(e: Event): number {
  return temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
}

/** The encoded size of the whole History message (what the server stores and a replay downloads). */
export function historyBytes(history: History): number {
  return temporal.api.history.v1.History.encode(history).finish().length;
}

export interface TurnCost {
  readonly turn: number;
  readonly events: number;
  readonly bytes: number;
  readonly byType: Readonly<Record<string, number>>;
  readonly bytesByType: Readonly<Record<string, number>>;
  /** Every event of the turn: type, activity type when it has one, encoded bytes. */
  readonly eventList: readonly { readonly type: string; readonly activity?: string; readonly bytes: number }[];
}

export interface HistoryCost {
  readonly events: number;
  readonly bytes: number;
  /** Events before the first model call is scheduled (start, first workflow task, set-up). */
  readonly preamble: { readonly events: number; readonly bytes: number };
  /** One entry per turn with a tool call: events from its plan scheduling to the next plan scheduling. */
  readonly turns: readonly TurnCost[];
  /** The final model call and the completion. */
  readonly tail: { readonly events: number; readonly bytes: number };
}

/** Splits a history at each model-call scheduling: the events and bytes each turn adds. */
export function historyCost(history: History, types: LoopActivityTypes): HistoryCost {
  const events = history.events ?? [];
  const starts: number[] = [];
  events.forEach((e, i) => {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === types.plan) starts.push(i);
  });
  const sizes = events.map(eventBytes);
  const span = (from: number, to: number): { events: number; bytes: number } => ({
    events: to - from,
    bytes: sizes.slice(from, to).reduce((a, b) => a + b, 0),
  });
  const turns: TurnCost[] = [];
  for (let k = 0; k + 1 < starts.length; k++) {
    const from = starts[k]!;
    const to = starts[k + 1]!;
    const byType: Record<string, number> = {};
    const bytesByType: Record<string, number> = {};
    const list: Array<{ type: string; activity?: string; bytes: number }> = [];
    for (let i = from; i < to; i++) {
      const e = events[i]!;
      const name = eventTypeName(e);
      byType[name] = (byType[name] ?? 0) + 1;
      bytesByType[name] = (bytesByType[name] ?? 0) + sizes[i]!;
      const activity =
        e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.markerRecordedEventAttributes?.markerName;
      list.push({ type: name, ...(activity ? { activity } : {}), bytes: sizes[i]! });
    }
    turns.push({ turn: k + 1, ...span(from, to), byType, bytesByType, eventList: list });
  }
  const first = starts[0] ?? events.length;
  const last = starts[starts.length - 1] ?? events.length;
  return {
    events: events.length,
    bytes: historyBytes(history),
    preamble: span(0, first),
    turns,
    tail: span(last, events.length),
  };
}

/** Attempts per activity (by activity id) of one activity type, from the ActivityTaskStarted events. */
export function attemptsByActivity(history: History, activityType: string): number[] {
  const scheduled = new Set<number>();
  const out: number[] = [];
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s && s.activityType?.name === activityType) scheduled.add(num(e.eventId));
    const st = e.activityTaskStartedEventAttributes;
    if (st && scheduled.has(num(st.scheduledEventId))) out.push(num(st.attempt) || 1);
  }
  return out;
}
