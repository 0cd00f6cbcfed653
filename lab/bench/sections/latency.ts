/**
 * Figure 1: per-call latency. Runs of 5 debit turns, governed, bare and each peer in turn, round by round (each on
 * its own worker, all up all along; the kind that goes first rotates from round to round) at concurrency 1;
 * every turn of every run is one sample. Latency comes from the server's history timestamps:
 * per call = the model's proposal recorded (plan ActivityTaskCompleted) → the tool result recorded (the
 * WorkflowTaskCompleted after the tool's ActivityTaskCompleted). The same code measures every workflow.
 */
import { LOOP_TYPES, turnTimings, type TurnTiming } from '../lib/history';
import { KINDS, PEER_KINDS, rotation, runLoop, type Kind, type PeerKind } from '../lib/runs';
import { account } from '../lib/stack';
import { median, round, summarize, type Summary } from '../lib/stats';
import { startWorkers } from '../lib/workers';
import { DEFAULT_TUNING, type BenchContext } from './common';

export interface PhaseSummary {
  readonly call: Summary;
  readonly turn: Summary;
  readonly plan: Summary;
  readonly decide: Summary;
  readonly tool: Summary;
  readonly record: Summary;
}

export interface LatencyRatio {
  readonly callP50: number;
  readonly callP95: number;
  readonly turnP50: number;
  readonly turnP95: number;
}

export interface PairedRatio {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** One peer's phases, and governed over it. */
export interface PeerLatency {
  readonly phases: PhaseSummary;
  readonly governedOver: LatencyRatio;
  /** The per-round check (below), governed p50 / this peer's p50. */
  readonly pairedCallP50: PairedRatio;
}

export interface LatencyFigures {
  readonly turnsPerRun: number;
  readonly rounds: number;
  readonly governed: PhaseSummary;
  readonly bare: PhaseSummary;
  /** Governed over bare. */
  readonly ratio: LatencyRatio;
  /**
   * Robustness check against load swings on a shared box: per round, governed p50 / bare p50 of the runs made
   * in that round; the median and range of those per-round ratios.
   */
  readonly pairedCallP50Ratio: PairedRatio;
  /** The peers (PEER_KINDS), each measured the same way. Absent in results written before the peers. */
  readonly peers?: Readonly<Partial<Record<PeerKind, PeerLatency>>>;
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

function ratioOf(a: PhaseSummary, b: PhaseSummary): LatencyRatio {
  return {
    callP50: round(a.call.p50 / b.call.p50),
    callP95: round(a.call.p95 / b.call.p95),
    turnP50: round(a.turn.p50 / b.turn.p50),
    turnP95: round(a.turn.p95 / b.turn.p95),
  };
}

function pairedOf(perRound: readonly number[]): PairedRatio {
  return { median: round(median(perRound)), min: round(Math.min(...perRound)), max: round(Math.max(...perRound)) };
}

export async function measureLatency(ctx: BenchContext): Promise<LatencyFigures> {
  const { stack } = ctx;
  // Short runs, rotated many times: a load swing on this shared box hits every kind alike.
  const turns = 5;
  const rounds = ctx.quick ? 6 : 10;
  const workers = await startWorkers(ctx, 'latency', DEFAULT_TUNING, KINDS);
  const samples = Object.fromEntries(KINDS.map((k) => [k, []])) as unknown as Record<Kind, TurnTiming[]>;
  const perRound: number[] = [];
  const perRoundOver = Object.fromEntries(PEER_KINDS.map((k) => [k, []])) as unknown as Record<PeerKind, number[]>;
  try {
    // Warm-up (not measured): loads the workflow context, JITs every path, opens the HTTP connections.
    for (const kind of KINDS) {
      await runLoop(stack.client, kind, workers.tq(kind), `bench-lat-warm-${kind}-${ctx.stamp}`, {
        turns: 3,
        account: account(0),
      });
    }
    for (let r = 0; r < rounds; r++) {
      const p50s: Partial<Record<Kind, number>> = {};
      for (const kind of rotation(r)) {
        const id = `bench-lat-${kind}-${r}-${ctx.stamp}`;
        const done = await runLoop(stack.client, kind, workers.tq(kind), id, { turns, account: account(r) });
        if (!done.ok) throw new Error(`latency run ${id} did not complete as expected: ${done.detail}`);
        const history = await done.handle.fetchHistory();
        const timings = turnTimings(history, LOOP_TYPES[kind]);
        samples[kind].push(...timings);
        p50s[kind] = summarize(timings.map((t) => t.callMs)).p50;
      }
      perRound.push(p50s.governed! / p50s.bare!);
      for (const peer of PEER_KINDS) perRoundOver[peer].push(p50s.governed! / p50s[peer]!);
    }
  } finally {
    await workers.stop();
  }
  const governed = phases(samples.governed);
  const bare = phases(samples.bare);
  const peers = Object.fromEntries(
    PEER_KINDS.map((peer): [PeerKind, PeerLatency] => {
      const p = phases(samples[peer]);
      return [peer, { phases: p, governedOver: ratioOf(governed, p), pairedCallP50: pairedOf(perRoundOver[peer]) }];
    }),
  ) as Record<PeerKind, PeerLatency>;
  const figures: LatencyFigures = {
    turnsPerRun: turns,
    rounds,
    governed,
    bare,
    ratio: ratioOf(governed, bare),
    pairedCallP50Ratio: pairedOf(perRound),
    peers,
  };
  ctx.log(
    `latency: per call p50 ${round(governed.call.p50, 1)} vs ${round(bare.call.p50, 1)} ms (${figures.ratio.callP50}x), ` +
      `p95 ${round(governed.call.p95, 1)} vs ${round(bare.call.p95, 1)} ms (${figures.ratio.callP95}x); ` +
      `per turn p50 ${round(governed.turn.p50, 1)} vs ${round(bare.turn.p50, 1)} ms (${figures.ratio.turnP50}x)`,
  );
  for (const peer of PEER_KINDS) {
    const { phases: p, governedOver: over } = peers[peer];
    ctx.log(
      `latency vs ${peer}: per call p50 ${round(governed.call.p50, 1)} vs ${round(p.call.p50, 1)} ms (${over.callP50}x), ` +
        `p95 ${round(governed.call.p95, 1)} vs ${round(p.call.p95, 1)} ms (${over.callP95}x); ` +
        `per turn p50 ${round(governed.turn.p50, 1)} vs ${round(p.turn.p50, 1)} ms (${over.turnP50}x)`,
    );
  }
  return figures;
}
