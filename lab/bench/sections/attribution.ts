/**
 * Cost attribution: what each mechanism of the governed run costs, measured in ONE run by switching it off (or,
 * where the run cannot work without it, doing it twice), one at a time (lab/bench/switches/catalogue.ts). The cells
 * are the bare loop, the governed run with every mechanism on (the reference), and the reference with one switch
 * applied each. In every round each cell, in turn, gets a fresh worker process, a warm-up, then a closed loop of
 * one-debit runs at concurrency 10: worker CPU per run, worker RSS peak, the server's CPU per run, events and bytes
 * of a sample of its histories. In the first round each cell also makes one long run (about 1,000 events in the
 * full profile), whose bytes per turn are the cell's history figure; every round replays that history in a
 * process of its own (`replay-proc.ts --repeat 3`): the first replay's CPU is the cold figure (a new replay worker,
 * its bundle loaded), the median of the others the warm one. Last, the heap one cached workflow of each distinct
 * bundle holds (`instance-proc.ts`).
 *
 * A cell's share of a figure is its difference to the reference over the reference's difference to bare: for an
 * "off" switch, reference minus cell; for a "twice" switch, cell minus reference. What the shares do not sum to is
 * left unexplained (`attributionShares`). The figures are medians over the rounds; the reference's spread over the
 * rounds is printed beside them, since a share smaller than that spread is not a finding.
 */
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { generateCodecKeys, ledgerloopDataConverter } from '../../../src/codec/data-converter';
import { runJsonChild } from '../lib/child-json';
import { historyBytes } from '../lib/history';
import { runLoop, type LoopSpec } from '../lib/runs';
import { account } from '../lib/stack';
import { median, round } from '../lib/stats';
import { startWorker, type WorkerHandle } from '../lib/worker-handle';
import { writeBenchBundle } from '../lib/bundles';
import { policyOf, REFERENCE, switchesNamed, type CellPlan, type MechanismSwitch } from '../switches/catalogue';
import type { SwitchId } from '../switches/marks';
import { closedLoop, sampleHistories } from './throughput';
import { DEFAULT_TUNING, type BenchContext } from './common';

/** The switches to run (ids, comma-separated); default every one. */
export const SWITCHES_ENV = 'BENCH_SWITCHES';

export type CellId = 'bare' | 'governed' | SwitchId;

export interface AttributionCell {
  readonly id: CellId;
  /** What the cell is: the bare loop, the reference, or the mechanism its switch takes out or doubles. */
  readonly mechanism: string;
  readonly how?: 'off' | 'twice';
  readonly what?: string;
  readonly bundleBytes: number;
  readonly runs: number;
  /** Medians over the rounds. */
  readonly workerCpuMsPerRun: number;
  readonly serverCpuMsPerRun: number;
  readonly rssPeakMb: number;
  readonly eventsPerRun: number;
  readonly bytesPerRun: number;
  readonly byRound: readonly { readonly workerCpuMsPerRun: number; readonly rssPeakMb: number }[];
  /** The cell's long run (first round). */
  readonly longRun: { readonly turns: number; readonly events: number; readonly bytes: number };
  /** History bytes a turn adds: (long run bytes − one-turn run bytes) / (turns − 1). */
  readonly bytesPerTurn: number;
  /** Replays of the long run, CPU ms of the replaying process (medians over the rounds; wall ms beside them). */
  readonly replay: {
    readonly events: number;
    readonly coldCpuMs: number;
    readonly warmCpuMs: number;
    readonly coldMs: number;
    readonly warmMs: number;
  };
  /** Heap one cached workflow of the cell's bundle holds before its first activation. */
  readonly heapKbPerWorkflow: number;
}

export interface AttributionFigures {
  readonly concurrency: number;
  readonly runsPerCell: number;
  readonly rounds: number;
  readonly cells: readonly AttributionCell[];
}

/** The figures a share is computed for. */
export const SHARE_METRICS = [
  'workerCpuMsPerRun',
  'rssPeakMb',
  'bytesPerRun',
  'bytesPerTurn',
  'coldReplayCpuMs',
  'warmReplayCpuMs',
  'heapKbPerWorkflow',
] as const;
export type ShareMetric = (typeof SHARE_METRICS)[number];

export function metricOf(c: AttributionCell, m: ShareMetric): number {
  switch (m) {
    case 'coldReplayCpuMs':
      return c.replay.coldCpuMs;
    case 'warmReplayCpuMs':
      return c.replay.warmCpuMs;
    default:
      return c[m];
  }
}

export interface Share {
  readonly id: SwitchId;
  /** The mechanism's cost in the metric's unit (positive: it costs), and over the reference-minus-bare gap. */
  readonly delta: Readonly<Record<ShareMetric, number>>;
  readonly ofGap: Readonly<Record<ShareMetric, number | undefined>>;
}

export interface Shares {
  /** Reference minus bare, per metric. */
  readonly gap: Readonly<Record<ShareMetric, number>>;
  readonly shares: readonly Share[];
  /** 1 − the sum of the shares, per metric (undefined when the gap is not positive). */
  readonly unexplained: Readonly<Record<ShareMetric, number | undefined>>;
}

const byMetric = <T>(f: (m: ShareMetric) => T): Record<ShareMetric, T> =>
  Object.fromEntries(SHARE_METRICS.map((m) => [m, f(m)])) as Record<ShareMetric, T>;

/** Each switched cell's share of the reference's cost over bare, and what the shares leave unexplained. */
export function attributionShares(cells: readonly AttributionCell[]): Shares | undefined {
  const bare = cells.find((c) => c.id === 'bare');
  const ref = cells.find((c) => c.id === 'governed');
  if (!bare || !ref) return undefined;
  const gap = byMetric((m) => metricOf(ref, m) - metricOf(bare, m));
  const shares = cells.flatMap((c): Share[] => {
    if (c.id === 'bare' || c.id === 'governed' || c.how === undefined) return [];
    const delta = byMetric((m) =>
      c.how === 'off' ? metricOf(ref, m) - metricOf(c, m) : metricOf(c, m) - metricOf(ref, m),
    );
    return [{ id: c.id, delta, ofGap: byMetric((m) => (gap[m] > 0 ? delta[m] / gap[m] : undefined)) }];
  });
  const unexplained = byMetric((m) =>
    gap[m] > 0 ? 1 - shares.reduce((sum, s) => sum + (s.ofGap[m] ?? 0), 0) : undefined,
  );
  return { gap, shares, unexplained };
}

interface Cell {
  readonly id: CellId;
  readonly mechanism: string;
  readonly sw?: MechanismSwitch;
  /** Absent for the bare cell. */
  readonly plan?: CellPlan;
  bundle?: { readonly path: string; readonly bytes: number };
}

interface RoundFigures {
  readonly workerCpuMsPerRun: number;
  readonly serverCpuMsPerRun: number;
  readonly rssPeakMb: number;
  readonly eventsPerRun: number;
  readonly bytesPerRun: number;
  readonly coldCpuMs: number;
  readonly warmCpuMs: number;
  readonly coldMs: number;
  readonly warmMs: number;
}

const PLACEHOLDER_TOKEN = 'bench:identity-off';

export async function measureAttribution(ctx: BenchContext): Promise<AttributionFigures> {
  const { stack } = ctx;
  const runs = ctx.quick ? 20 : 40;
  const rounds = ctx.quick ? 1 : 3;
  const longTurns = ctx.quick ? 10 : 80;
  const concurrency = 10;
  const switches = switchesNamed(process.env[SWITCHES_ENV]);
  const cells: Cell[] = [
    { id: 'bare', mechanism: 'the bare loop' },
    { id: 'governed', mechanism: 'governed, every mechanism on', plan: REFERENCE },
    ...switches.map((sw) => ({ id: sw.id, mechanism: sw.mechanism, sw, plan: sw.plan(REFERENCE) })),
  ];
  // One bench bundle per distinct set of replacements; the reference's is built the same way (no replacement).
  const built = new Map<string, { path: string; bytes: number }>();
  for (const c of cells) {
    if (!c.plan) {
      c.bundle = { path: stack.bundles.bare, bytes: statSync(stack.bundles.bare).size };
      continue;
    }
    const key = JSON.stringify(c.plan.bundle);
    let b = built.get(key);
    if (!b) {
      const file = path.join(stack.dir, `bundle-attribution-${built.size}.js`);
      const t0 = Date.now();
      b = await writeBenchBundle(file, c.plan.bundle);
      ctx.log(`attribution: bundle for ${c.id} (${round(b.bytes / 1024, 0)} KB) in ${Date.now() - t0} ms`);
      built.set(key, b);
    }
    c.bundle = b;
  }
  const codec = generateCodecKeys('bench');
  const codecClient = new Client({
    connection: stack.connection,
    namespace: stack.server.namespace,
    dataConverter: ledgerloopDataConverter(codec.keys),
  });
  const measured = new Map<CellId, RoundFigures[]>(cells.map((c) => [c.id, []]));
  const longRuns = new Map<CellId, { file: string; turns: number; events: number; bytes: number }>();
  for (let r = 0; r < rounds; r++) {
    for (const c of cells) {
      const fig = await measureCell(ctx, c, r, {
        runs,
        concurrency,
        longTurns,
        codecKeys: codec.keys,
        codecClient,
        longRuns,
      });
      measured.get(c.id)!.push(fig);
      ctx.log(
        `attribution ${c.id} (round ${r + 1} of ${rounds}): worker CPU ${round(fig.workerCpuMsPerRun, 1)} ms/run, ` +
          `RSS peak ${round(fig.rssPeakMb, 1)} MB, ${fig.eventsPerRun} events · ${fig.bytesPerRun} B per run; ` +
          `replay of ${longRuns.get(c.id)?.events} events: CPU cold ${round(fig.coldCpuMs, 0)} ms, warm ${round(fig.warmCpuMs, 0)} ms`,
      );
    }
  }
  const heaps = new Map<string, number>();
  for (const c of cells) {
    const bundle = c.bundle!.path;
    if (heaps.has(bundle)) continue;
    const h = await runJsonChild<{ kbPerWorkflow: number }>(
      path.join(__dirname, '..', 'instance-proc.ts'),
      [bundle, c.plan ? 'agentRun' : 'bareLoop', String(ctx.quick ? 100 : 200)],
      ['--expose-gc', '-r', 'tsx/cjs'],
      `instance-proc for the ${c.id} bundle`,
    );
    heaps.set(bundle, h.kbPerWorkflow);
  }
  const out = cells.map((c): AttributionCell => {
    const ms = measured.get(c.id)!;
    const med = (f: (m: RoundFigures) => number): number => round(median(ms.map(f)), 1);
    const long = longRuns.get(c.id)!;
    const bytesPerRun = Math.round(median(ms.map((m) => m.bytesPerRun)));
    return {
      id: c.id,
      mechanism: c.mechanism,
      ...(c.sw ? { how: c.sw.how, what: c.sw.what } : {}),
      bundleBytes: c.bundle!.bytes,
      runs,
      workerCpuMsPerRun: med((m) => m.workerCpuMsPerRun),
      serverCpuMsPerRun: med((m) => m.serverCpuMsPerRun),
      rssPeakMb: med((m) => m.rssPeakMb),
      eventsPerRun: ms[0]!.eventsPerRun,
      bytesPerRun,
      byRound: ms.map((m) => ({ workerCpuMsPerRun: round(m.workerCpuMsPerRun, 1), rssPeakMb: round(m.rssPeakMb, 1) })),
      longRun: { turns: long.turns, events: long.events, bytes: long.bytes },
      bytesPerTurn: Math.round((long.bytes - bytesPerRun) / (long.turns - 1)),
      replay: {
        events: long.events,
        coldCpuMs: med((m) => m.coldCpuMs),
        warmCpuMs: med((m) => m.warmCpuMs),
        coldMs: med((m) => m.coldMs),
        warmMs: med((m) => m.warmMs),
      },
      heapKbPerWorkflow: heaps.get(c.bundle!.path)!,
    };
  });
  return { concurrency, runsPerCell: runs, rounds, cells: out };
}

/** The worker process of a cell: its bundle, converter, policy, quota store and module switches. */
async function startCellWorker(ctx: BenchContext, c: Cell, tq: string, codecKeys: string): Promise<WorkerHandle> {
  const base = ctx.stack.workerConfig(tq, DEFAULT_TUNING, c.plan ? 'governed' : 'bare');
  const plan = c.plan;
  if (!plan) return startWorker(base);
  const worker = Object.keys(plan.worker).length > 0 ? plan.worker : undefined;
  return startWorker(
    {
      ...base,
      bundlePath: c.bundle!.path,
      converter: plan.codec ? { keys: codecKeys } : {},
      policy: policyOf(plan),
      ...(plan.quota ? { quota: { sqliteFile: path.join(ctx.stack.dir, `quota-${tq}.db`) } } : {}),
    },
    worker ? { moduleSwitches: { table: worker, markFile: path.join(ctx.stack.dir, `${tq}.switched`) } } : {},
  );
}

async function measureCell(
  ctx: BenchContext,
  c: Cell,
  r: number,
  opts: {
    readonly runs: number;
    readonly concurrency: number;
    readonly longTurns: number;
    readonly codecKeys: string;
    readonly codecClient: Client;
    readonly longRuns: Map<CellId, { file: string; turns: number; events: number; bytes: number }>;
  },
): Promise<RoundFigures> {
  const { stack } = ctx;
  const tq = `bench-attr-${r}-${c.id}-${ctx.stamp}`;
  const kind = c.plan ? 'governed' : 'bare';
  const client = c.plan?.codec ? opts.codecClient : stack.client;
  const extra: Partial<LoopSpec> = {
    ...(c.plan?.token === 'placeholder' ? { identityToken: PLACEHOLDER_TOKEN } : {}),
    ...(c.plan?.start === 'plain' ? { plainStart: true } : {}),
  };
  const worker = await startCellWorker(ctx, c, tq, opts.codecKeys);
  try {
    await closedLoop(ctx, kind, tq, `${tq}-warm`, opts.concurrency, 10, extra, client);
    const expected = Object.keys(c.plan?.worker ?? {});
    const switched = worker.switchedModules();
    const missing = expected.filter((m) => !switched.includes(m));
    if (missing.length > 0)
      throw new Error(`attribution cell ${c.id}: the worker never loaded a switched ${missing.join(', ')}`);
    worker.resetRss();
    const server0 = stack.server.cpuMs();
    const loop = await closedLoop(ctx, kind, tq, tq, opts.concurrency, opts.runs, extra, client);
    const rss = await worker.rss();
    const done = opts.runs - loop.failed;
    if (loop.failed > 0) throw new Error(`attribution cell ${c.id}: ${loop.failed} run(s) failed: ${loop.failures[0]}`);
    const serverCpu = (stack.server.cpuMs() - server0) / done;
    const sampled = await sampleHistories(ctx, tq, opts.runs);
    if (!opts.longRuns.has(c.id)) {
      const id = `${tq}-long`;
      const long = await runLoop(client, kind, tq, id, {
        ...extra,
        turns: opts.longTurns,
        account: account(3),
        deadlineInMs: 60 * 60_000,
        maxHistoryEvents: 1_000_000,
      });
      if (!long.ok) throw new Error(`attribution cell ${c.id}: the long run ${id} did not complete: ${long.detail}`);
      const history = await long.handle.fetchHistory();
      const file = path.join(stack.dir, `attribution-${c.id}.json`);
      writeFileSync(file, historyToJSON(history));
      opts.longRuns.set(c.id, {
        file,
        turns: opts.longTurns,
        events: history.events?.length ?? 0,
        bytes: historyBytes(history),
      });
    }
    const replay = await runJsonChild<{ msEach: number[]; cpuMsEach: number[] }>(
      path.join(__dirname, '..', 'replay-proc.ts'),
      [opts.longRuns.get(c.id)!.file, c.bundle!.path, '--repeat', '3', ...(c.plan?.codec ? ['--codec'] : [])],
      ['-r', 'tsx/cjs'],
      `replay-proc for the attribution cell ${c.id}`,
      c.plan?.codec ? { BENCH_CODEC_KEYS: opts.codecKeys } : {},
    );
    return {
      workerCpuMsPerRun: rss.cpuMs / done,
      serverCpuMsPerRun: serverCpu,
      rssPeakMb: rss.peakMb,
      eventsPerRun: sampled.eventsPerRun,
      bytesPerRun: sampled.bytesPerRun ?? 0,
      coldCpuMs: replay.cpuMsEach[0]!,
      warmCpuMs: median(replay.cpuMsEach.slice(1)),
      coldMs: replay.msEach[0]!,
      warmMs: median(replay.msEach.slice(1)),
    };
  } finally {
    await worker.stop();
  }
}
