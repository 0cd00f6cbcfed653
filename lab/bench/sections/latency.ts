/**
 * Figure 1: per-call latency. Runs of 5 debit turns, governed and bare alternating run by run (each on its own
 * worker, both up all along) at concurrency 1; every turn of every run is one sample. Latency comes from the server's history timestamps:
 * per call = the model's proposal recorded (plan ActivityTaskCompleted) → the tool result recorded (the
 * WorkflowTaskCompleted after the tool's ActivityTaskCompleted). The same code measures both workflows.
 */
import { GOVERNED_TYPES, BARE_TYPES, turnTimings, type TurnTiming } from '../lib/history';
import { runLoop, type Kind } from '../lib/runs';
import { account } from '../lib/stack';
import { median, round, summarize, type Summary } from '../lib/stats';
import { startPair } from '../lib/workers';
import { DEFAULT_TUNING, type BenchContext } from './common';

export interface PhaseSummary {
  readonly call: Summary;
  readonly turn: Summary;
  readonly plan: Summary;
  readonly decide: Summary;
  readonly tool: Summary;
  readonly record: Summary;
}

export interface LatencyFigures {
  readonly turnsPerRun: number;
  readonly rounds: number;
  readonly governed: PhaseSummary;
  readonly bare: PhaseSummary;
  readonly ratio: {
    readonly callP50: number;
    readonly callP95: number;
    readonly turnP50: number;
    readonly turnP95: number;
  };
  /**
   * Robustness check against load swings on a shared box: per round, governed p50 / bare p50 of the two runs
   * made back to back; the median and range of those per-round ratios.
   */
  readonly pairedCallP50Ratio: { readonly median: number; readonly min: number; readonly max: number };
}

function phases(samples: readonly TurnTiming[]): PhaseSummary {
  const pick = (f: (t: TurnTiming) => number): Summary => summarize(samples.map(f));
  return {
    call: pick((t) => t.callMs),
    turn: pick((t) => t.turnMs),
    plan: pick((t) => t.planMs),
    decide: pick((t) => t.decideMs),
    tool: pick((t) => t.toolMs),
    record: pick((t) => t.recordMs),
  };
}

export async function measureLatency(ctx: BenchContext): Promise<LatencyFigures> {
  const { stack } = ctx;
  // Short runs, alternated many times: a load swing on this shared box hits both kinds alike.
  const turns = 5;
  const rounds = ctx.quick ? 6 : 10;
  const workers = await startPair(ctx, 'latency', DEFAULT_TUNING);
  const samples: Record<Kind, TurnTiming[]> = { governed: [], bare: [] };
  const perRound: number[] = [];
  try {
    // Warm-up (not measured): loads the workflow context, JITs both paths, opens the HTTP connections.
    for (const kind of ['governed', 'bare'] as const) {
      await runLoop(stack.client, kind, workers.tq(kind), `bench-lat-warm-${kind}-${ctx.stamp}`, {
        turns: 3,
        account: account(0),
      });
    }
    for (let r = 0; r < rounds; r++) {
      const order: Kind[] = r % 2 === 0 ? ['governed', 'bare'] : ['bare', 'governed'];
      const p50s: Partial<Record<Kind, number>> = {};
      for (const kind of order) {
        const id = `bench-lat-${kind}-${r}-${ctx.stamp}`;
        const done = await runLoop(stack.client, kind, workers.tq(kind), id, { turns, account: account(r) });
        if (!done.ok) throw new Error(`latency run ${id} did not complete as expected: ${done.detail}`);
        const history = await done.handle.fetchHistory();
        const timings = turnTimings(history, kind === 'governed' ? GOVERNED_TYPES : BARE_TYPES);
        samples[kind].push(...timings);
        p50s[kind] = summarize(timings.map((t) => t.callMs)).p50;
      }
      perRound.push(p50s.governed! / p50s.bare!);
    }
  } finally {
    await workers.stop();
  }
  const governed = phases(samples.governed);
  const bare = phases(samples.bare);
  const figures: LatencyFigures = {
    turnsPerRun: turns,
    rounds,
    governed,
    bare,
    ratio: {
      callP50: round(governed.call.p50 / bare.call.p50),
      callP95: round(governed.call.p95 / bare.call.p95),
      turnP50: round(governed.turn.p50 / bare.turn.p50),
      turnP95: round(governed.turn.p95 / bare.turn.p95),
    },
    pairedCallP50Ratio: {
      median: round(median(perRound)),
      min: round(Math.min(...perRound)),
      max: round(Math.max(...perRound)),
    },
  };
  ctx.log(
    `latency: per call p50 ${round(governed.call.p50, 1)} vs ${round(bare.call.p50, 1)} ms (${figures.ratio.callP50}x), ` +
      `p95 ${round(governed.call.p95, 1)} vs ${round(bare.call.p95, 1)} ms (${figures.ratio.callP95}x); ` +
      `per turn p50 ${round(governed.turn.p50, 1)} vs ${round(bare.turn.p50, 1)} ms (${figures.ratio.turnP50}x)`,
  );
  return figures;
}
