/**
 * Figure 3: history cost. Governed and bare runs of 1, 5 and 20 debit turns; each history is split at every
 * model-call scheduling, so a turn is exactly "one model call + one tool call" with everything the workflow
 * records around them. Bytes are the protobuf-encoded size of each HistoryEvent (payloads, metadata, search
 * attributes and all), i.e. what the server stores and every replay downloads.
 */
import { BARE_TYPES, GOVERNED_TYPES, historyCost, type HistoryCost } from '../lib/history';
import { runLoop, type Kind } from '../lib/runs';
import { account } from '../lib/stack';
import { mean, round, slope } from '../lib/stats';
import { startPair } from '../lib/workers';
import { DEFAULT_TUNING, type BenchContext } from './common';

export interface RunCost {
  readonly kind: Kind;
  readonly turns: number;
  readonly events: number;
  readonly bytes: number;
  readonly eventsPerTurn: number;
  readonly bytesPerTurn: number;
  readonly preamble: { readonly events: number; readonly bytes: number };
  readonly tail: { readonly events: number; readonly bytes: number };
  /** Bytes of each turn in order: flat means the run does not carry its past along. */
  readonly turnBytes: readonly number[];
  readonly turnEvents: readonly number[];
}

export interface HistoryFigures {
  readonly runs: readonly RunCost[];
  readonly governed: KindSummary;
  readonly bare: KindSummary;
  /** Event types of one governed turn (from the longest run, a middle turn). */
  readonly governedTurnEventTypes: Readonly<Record<string, number>>;
  readonly bareTurnEventTypes: Readonly<Record<string, number>>;
  /** Bytes of that turn by event type. */
  readonly governedTurnBytesByType: Readonly<Record<string, number>>;
  readonly bareTurnBytesByType: Readonly<Record<string, number>>;
  /** That governed turn event by event. */
  readonly governedTurnEvents: readonly { readonly type: string; readonly activity?: string; readonly bytes: number }[];
}

export interface KindSummary {
  /** Events one more turn adds (turns of the longest run). */
  readonly eventsPerTurn: number;
  readonly bytesPerTurn: number;
  /** Least-squares growth of a turn's bytes per turn index, in the longest run (0 = flat). */
  readonly bytesPerTurnGrowth: number;
  /** The same from turn 2 on: the first turn carries one-time records (the authorizer's policy). */
  readonly bytesPerTurnGrowthAfterFirst: number;
  /** Events of the first turn of the longest run, and the most any later turn has. */
  readonly firstTurnEvents: number;
  readonly laterTurnEventsMax: number;
  /** Bytes of the first and last turn of the longest run. */
  readonly firstTurnBytes: number;
  readonly lastTurnBytes: number;
  /** Fixed cost of a run: the events before the first turn and after the last. */
  readonly fixedEvents: number;
  readonly fixedBytes: number;
}

function cost(kind: Kind, turns: number, c: HistoryCost): RunCost {
  return {
    kind,
    turns,
    events: c.events,
    bytes: c.bytes,
    eventsPerTurn: round(mean(c.turns.map((t) => t.events)), 2),
    bytesPerTurn: round(mean(c.turns.map((t) => t.bytes)), 1),
    preamble: c.preamble,
    tail: c.tail,
    turnBytes: c.turns.map((t) => t.bytes),
    turnEvents: c.turns.map((t) => t.events),
  };
}

function summary(runs: readonly RunCost[]): KindSummary {
  const longest = runs.reduce((a, b) => (b.turns > a.turns ? b : a));
  return {
    eventsPerTurn: longest.eventsPerTurn,
    bytesPerTurn: longest.bytesPerTurn,
    bytesPerTurnGrowth: round(
      slope(
        longest.turnBytes.map((_, i) => i + 1),
        longest.turnBytes,
      ),
      2,
    ),
    bytesPerTurnGrowthAfterFirst: round(
      slope(
        longest.turnBytes.slice(1).map((_, i) => i + 2),
        longest.turnBytes.slice(1),
      ),
      2,
    ),
    firstTurnEvents: longest.turnEvents[0] ?? NaN,
    laterTurnEventsMax: Math.max(...longest.turnEvents.slice(1)),
    firstTurnBytes: longest.turnBytes[0] ?? NaN,
    lastTurnBytes: longest.turnBytes[longest.turnBytes.length - 1] ?? NaN,
    fixedEvents: longest.preamble.events + longest.tail.events,
    fixedBytes: longest.preamble.bytes + longest.tail.bytes,
  };
}

export async function measureHistoryCost(ctx: BenchContext): Promise<HistoryFigures> {
  const { stack } = ctx;
  const workers = await startPair(ctx, 'history', DEFAULT_TUNING);
  const runs: RunCost[] = [];
  let governedTurnEventTypes: Record<string, number> = {};
  let bareTurnEventTypes: Record<string, number> = {};
  let governedTurnBytesByType: Record<string, number> = {};
  let governedTurnEvents: HistoryFigures['governedTurnEvents'] = [];
  let bareTurnBytesByType: Record<string, number> = {};
  try {
    for (const turns of [1, 5, 20]) {
      for (const kind of ['governed', 'bare'] as const) {
        const id = `bench-hist-${kind}-${turns}-${ctx.stamp}`;
        const done = await runLoop(stack.client, kind, workers.tq(kind), id, { turns, account: account(turns) });
        if (!done.ok) throw new Error(`history run ${id} did not complete as expected: ${done.detail}`);
        const c = historyCost(await done.handle.fetchHistory(), kind === 'governed' ? GOVERNED_TYPES : BARE_TYPES);
        runs.push(cost(kind, turns, c));
        const middle = c.turns[Math.floor(c.turns.length / 2)];
        if (turns === 20 && middle) {
          if (kind === 'governed') {
            governedTurnEventTypes = { ...middle.byType };
            governedTurnBytesByType = { ...middle.bytesByType };
            governedTurnEvents = middle.eventList;
          } else {
            bareTurnEventTypes = { ...middle.byType };
            bareTurnBytesByType = { ...middle.bytesByType };
          }
        }
      }
    }
  } finally {
    await workers.stop();
  }
  const governed = summary(runs.filter((r) => r.kind === 'governed'));
  const bare = summary(runs.filter((r) => r.kind === 'bare'));
  ctx.log(
    `history: governed ${governed.eventsPerTurn} events / ${governed.bytesPerTurn} B per turn (growth ${governed.bytesPerTurnGrowth} B/turn), ` +
      `bare ${bare.eventsPerTurn} events / ${bare.bytesPerTurn} B per turn`,
  );
  return {
    runs,
    governed,
    bare,
    governedTurnEventTypes,
    bareTurnEventTypes,
    governedTurnBytesByType,
    bareTurnBytesByType,
    governedTurnEvents,
  };
}
