/**
 * Figure 4: replay speed. Generates ONE long governed run per target size (about 1k, 2k and 10k events; never
 * stitched from parallel runs), times its generation, then replays the fetched history with
 * Worker.runReplayHistory: once, then twice more (the figure is the median of the repeats; the 10k-event history
 * is replayed once). Every replay creates a replay worker and loads the bundle, so every figure includes that
 * fixed cost; then (up to 2k events) three times in a row by one replay worker, where the second and third
 * replays are what a running worker pays for a run it picks up; a 1-turn history's replay time is reported as that fixed cost. A bare history of about 1k events
 * is replayed for comparison, and one of about 10k in full mode: the ratio is taken at equal lengths.
 * While each long run is generated, its worker's RSS is read every second: the first and last tenth of those
 * readings say whether a worker's memory grows with a run's length.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { BARE_TYPES, GOVERNED_TYPES, historyCost, turnTimings, type History } from '../lib/history';
import { runLoop, type BaselineKind, type Kind } from '../lib/runs';
import { account } from '../lib/stack';
import { median, round, tenthMean } from '../lib/stats';
import { startPair } from '../lib/workers';
import { readRssEverySecond } from '../lib/worker-handle';
import { DEFAULT_TUNING, type BenchContext } from './common';

/** A folder to keep the generated long histories in (`<kind>-<target>.json`), to profile or replay them later. */
export const SAVE_HISTORIES_ENV = 'BENCH_SAVE_HISTORIES';

export interface ReplayCase {
  readonly kind: Kind;
  readonly targetEvents: number;
  readonly turns: number;
  readonly events: number;
  readonly generationSeconds: number;
  readonly firstMs: number;
  /** Repeats after the first replay (none for the 10k-event history). */
  readonly warmMs: readonly number[];
  /** The figure: median of the repeats, or the first replay when there is none. */
  readonly warmMedianMs: number;
  /**
   * The same history replayed again and again by ONE replay worker (Worker.runReplayHistories): the time of each
   * replay after the first, which alone pays for creating the worker and loading the bundle. What a running
   * worker pays for a run it picks up. Absent in older results.
   */
  readonly inWorkerMs?: readonly number[];
  readonly inWorkerMedianMs?: number;
  readonly eventsPerSecond: number;
  /** How the run's turns changed as it grew: bytes and duration of the first and last tenth of its turns. */
  readonly growth: {
    readonly firstTenthBytesPerTurn: number;
    readonly lastTenthBytesPerTurn: number;
    readonly firstTenthTurnMs: number;
    readonly lastTenthTurnMs: number;
  };
  /**
   * The worker's RSS read every second while it ran this one run: first and last tenth of the readings.
   * Absent in results written before it was measured.
   */
  readonly workerRss?: RssOverRun;
}

export interface RssOverRun {
  readonly samples: number;
  readonly firstTenthMb: number;
  readonly lastTenthMb: number;
}

export interface ReplayFigures {
  readonly fixedCostMs: number;
  readonly cases: readonly ReplayCase[];
}

export interface TurnShape {
  readonly eventsPerTurn: number;
  readonly fixedEvents: number;
}

/** Replays `history` `times` times in one replay worker; the milliseconds of each replay after the first. */
async function replaysInOneWorker(
  bundlePath: string,
  history: History,
  name: string,
  times: number,
): Promise<number[]> {
  const out: number[] = [];
  let t = performance.now();
  const histories = Array.from({ length: times }, (_, i) => ({ workflowId: `${name}-${i}`, history }));
  for await (const r of Worker.runReplayHistories(
    { workflowBundle: { codePath: bundlePath }, replayName: name },
    histories,
  )) {
    if (r.error) throw r.error;
    const now = performance.now();
    out.push(now - t);
    t = now;
  }
  return out.slice(1).map((x) => round(x, 1));
}

async function replayMs(bundlePath: string, history: History, name: string): Promise<number> {
  const t0 = performance.now();
  await Worker.runReplayHistory({ workflowBundle: { codePath: bundlePath }, replayName: name }, history);
  return performance.now() - t0;
}

export async function measureReplay(
  ctx: BenchContext,
  shape: { governed: TurnShape; bare: TurnShape },
): Promise<{ figures: ReplayFigures; longest: History }> {
  const { stack } = ctx;
  const workers = await startPair(ctx, 'replay', DEFAULT_TUNING);
  // 2,000 events is the default continue-as-new point of agentRun (budgets.maxHistoryEvents): the largest
  // history a worker replays for a run under default settings. 10k is the figure (full mode only).
  const targets: Array<{ kind: BaselineKind; target: number }> = [
    { kind: 'governed', target: 1_000 },
    { kind: 'governed', target: 2_000 },
    ...(ctx.quick ? [] : [{ kind: 'governed' as const, target: 10_000 }]),
    { kind: 'bare', target: 1_000 },
    // The same length for bare: replay time is compared at equal event counts (1k and 10k).
    ...(ctx.quick ? [] : [{ kind: 'bare' as const, target: 10_000 }]),
  ];
  const generated: Array<{
    kind: BaselineKind;
    target: number;
    turns: number;
    history: History;
    seconds: number;
    rssMb: number[];
  }> = [];
  let tiny: History | undefined;
  try {
    tiny = await (
      await runLoop(stack.client, 'governed', workers.tq('governed'), `bench-replay-tiny-${ctx.stamp}`, {
        turns: 1,
        account: account(3),
      })
    ).handle.fetchHistory();
    for (const { kind, target } of targets) {
      const s = shape[kind];
      const turns = Math.max(1, Math.ceil((target - s.fixedEvents) / s.eventsPerTurn));
      const id = `bench-replay-${kind}-${target}-${ctx.stamp}`;
      const t0 = Date.now();
      const rss = readRssEverySecond(workers.handles[kind]);
      const done = await runLoop(stack.client, kind, workers.tq(kind), id, {
        turns,
        account: account(5),
        deadlineInMs: 60 * 60_000,
        maxHistoryEvents: 1_000_000,
      }).finally(() => rss.stop());
      const rssMb = await rss.stop(); // stopped already; the same readings
      const seconds = (Date.now() - t0) / 1000;
      if (!done.ok) throw new Error(`replay source run ${id} did not complete: ${done.detail}`);
      const history = await done.handle.fetchHistory();
      const last = history.events?.[history.events.length - 1];
      if (!last?.workflowExecutionCompletedEventAttributes) {
        throw new Error(
          `replay source run ${id} did not end in one history (continued as new?): not a valid replay source`,
        );
      }
      ctx.log(`replay: generated ${kind} ${history.events?.length} events (${turns} turns) in ${seconds.toFixed(1)} s`);
      const keep = process.env[SAVE_HISTORIES_ENV];
      if (keep) {
        mkdirSync(keep, { recursive: true });
        writeFileSync(path.join(keep, `${kind}-${target}.json`), historyToJSON(history));
      }
      generated.push({ kind, target, turns, history, seconds, rssMb });
    }
  } finally {
    await workers.stop();
  }
  // Replays run after the worker stopped, in this process: nothing else of the benchmark runs meanwhile.
  const fixedWarm: number[] = [];
  const first = await replayMs(stack.bundles.governed, tiny, 'tiny-cold');
  for (let i = 0; i < 3; i++) fixedWarm.push(await replayMs(stack.bundles.governed, tiny, `tiny-${i}`));
  ctx.log(
    `replay: a 1-turn history (${tiny.events?.length} events) replays in ${round(first, 1)} ms first, ${round(median(fixedWarm), 1)} ms warm`,
  );
  const cases: ReplayCase[] = [];
  for (const g of generated) {
    const events = g.history.events?.length ?? 0;
    const bundle = stack.bundles[g.kind];
    const firstMs = await replayMs(bundle, g.history, `${g.kind}-${g.target}-cold`);
    const warmMs: number[] = [];
    // The 10k-event replay costs many seconds: replayed once (the figure is then that first replay).
    const reps = g.target >= 10_000 ? 0 : 2;
    for (let i = 0; i < reps; i++)
      warmMs.push(round(await replayMs(bundle, g.history, `${g.kind}-${g.target}-${i}`), 1));
    const warmMedianMs = warmMs.length > 0 ? median(warmMs) : round(firstMs, 1);
    // Not for the 10k-event histories: three more replays of each would cost the full run half a minute.
    const inWorkerMs =
      g.target >= 10_000 ? [] : await replaysInOneWorker(bundle, g.history, `${g.kind}-${g.target}-in-worker`, 3);
    const c: ReplayCase = {
      kind: g.kind,
      targetEvents: g.target,
      turns: g.turns,
      events,
      generationSeconds: round(g.seconds, 1),
      firstMs: round(firstMs, 1),
      warmMs,
      warmMedianMs,
      ...(inWorkerMs.length > 0 ? { inWorkerMs, inWorkerMedianMs: median(inWorkerMs) } : {}),
      eventsPerSecond: Math.round(events / (warmMedianMs / 1000)),
      growth: growthOf(g.history, g.kind),
      workerRss: {
        samples: g.rssMb.length,
        firstTenthMb: tenthMean(g.rssMb, false),
        lastTenthMb: tenthMean(g.rssMb, true),
      },
    };
    cases.push(c);
    ctx.log(
      `replay: ${g.kind} ${events} events: first ${c.firstMs} ms, warm median ${warmMedianMs} ms (${c.eventsPerSecond} events/s), ` +
        (inWorkerMs.length > 0
          ? `in a running replay worker ${inWorkerMs.join(', ')} ms`
          : 'not replayed in a running worker'),
    );
  }
  // The profile replays the 2k-event history (the default continue-as-new size): same picture as 10k, faster.
  const longest = (generated.find((g) => g.kind === 'governed' && g.target === 2_000) ?? generated[0]!).history;
  return { figures: { fixedCostMs: round(median(fixedWarm), 1), cases }, longest };
}

function growthOf(history: History, kind: Kind): ReplayCase['growth'] {
  const types = kind === 'governed' ? GOVERNED_TYPES : BARE_TYPES;
  const bytes = historyCost(history, types).turns.map((t) => t.bytes);
  const ms = turnTimings(history, types).map((t) => t.turnMs);
  return {
    firstTenthBytesPerTurn: tenthMean(bytes, false),
    lastTenthBytesPerTurn: tenthMean(bytes, true),
    firstTenthTurnMs: tenthMean(ms, false),
    lastTenthTurnMs: tenthMean(ms, true),
  };
}

/** Reads the worker's current RSS every second; `stop()` (idempotent) resolves with the readings once the last is in. */
