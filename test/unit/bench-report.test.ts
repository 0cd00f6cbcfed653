/**
 * The benchmark report's peer column, its worker-RSS rows (over a run, and as runs are served) and its ablation
 * table: every figure it prints is read from the measured cells (change a cell, the sentence changes), and
 * results written before a figure existed render exactly as they did, without its row.
 */
import { detailTables, figureRows, throughputSideBySide } from '../../lab/bench/report';
import type { Kind } from '../../lab/bench/lib/runs';
import type { Summary } from '../../lab/bench/lib/stats';
import type { LatencyFigures, PhaseSummary } from '../../lab/bench/sections/latency';
import type { Ablation } from '../../lab/bench/sections/profile';
import type { ReplayCase } from '../../lab/bench/sections/replay';
import type { ThroughputCell, ThroughputFigures } from '../../lab/bench/sections/throughput';
import { DEFAULT_TUNING } from '../../lab/bench/sections/common';

function summary(p50: number, p95: number): Summary {
  return { n: 50, p50, p95, mean: p50, min: p50, max: p95 };
}

function phases(call: number): PhaseSummary {
  return {
    call: summary(call, call * 1.5),
    turn: summary(call + 7, call * 1.6),
    plan: summary(6, 9),
    decide: summary(40, 50),
    tool: summary(12, 20),
    record: summary(call - 52, call - 40),
  };
}

function cell(kind: Kind, concurrency: number, runsPerSecond: number, worker: number, peak: number): ThroughputCell {
  return {
    kind,
    concurrency,
    hosts: 1,
    runs: 20,
    failed: 0,
    seconds: 20 / runsPerSecond,
    runsPerSecond,
    runLatencyMs: { p50: 200, p95: 300, max: 400 },
    rssMb: { idle: peak - 30, mean: peak - 10, peak },
    cpuMsPerRun: { worker, server: 60, wallet: 3 },
    workerStartupMs: 4000,
    slowWorkflowTasks: 0,
    sampledHistories: { runs: 20, workflowTaskTimeouts: 0, workflowTaskFailures: 0, eventsPerRun: 23 },
  };
}

const oldLatency: LatencyFigures = {
  turnsPerRun: 5,
  rounds: 10,
  governed: phases(92),
  bare: phases(90),
  ratio: { callP50: 1.02, callP95: 1.02, turnP50: 1.02, turnP95: 1.02 },
  pairedCallP50Ratio: { median: 1.01, min: 0.95, max: 1.1 },
};

const oldThroughput: ThroughputFigures = {
  hosts: 1,
  cells: [cell('governed', 10, 8.4, 66, 376), cell('bare', 10, 7.8, 38, 262)],
  ratios: [{ concurrency: 10, governedOverBare: 1.08, rssPeakRatio: 1.44 }],
  tuning: DEFAULT_TUNING,
};

const withPeer = {
  latency: {
    ...oldLatency,
    peers: {
      peer: {
        phases: phases(80),
        governedOver: { callP50: 1.15, callP95: 1.15, turnP50: 1.14, turnP95: 1.15 },
        pairedCallP50: { median: 1.12, min: 0.9, max: 1.3 },
      },
    },
  },
  throughput: {
    ...oldThroughput,
    cells: [...oldThroughput.cells, cell('peer', 10, 9, 33, 278)],
    ratios: [
      { ...oldThroughput.ratios[0]!, overPeers: { peer: { runsPerSecond: 0.93, workerCpuPerRun: 2, rssPeak: 1.35 } } },
    ],
  },
};

describe('bench report, the heavier peer', () => {
  it('renders results written before the peer existed as before: no peer row, two latency columns', () => {
    const rows = figureRows({ latency: oldLatency, throughput: oldThroughput }, 60, false);
    expect(rows.map((r) => r.figure).filter((f) => /peer/i.test(f))).toEqual([]);
    const tables = detailTables({ latency: oldLatency, throughput: oldThroughput });
    expect(tables).toContain('| Phase | Governed | Bare |\n');
    expect(tables).not.toMatch(/peer/i);
    expect(throughputSideBySide([oldThroughput])).toEqual([]);
  });

  it('adds the governed-over-peer rows after the existing ones, with the measured figures', () => {
    const before = figureRows({ latency: oldLatency, throughput: oldThroughput }, 60, false);
    const rows = figureRows(withPeer, 60, false);
    // Every existing row is still there, unchanged and in the same order.
    expect(rows.filter((r) => !/peer/i.test(r.figure))).toEqual(before);
    const call = rows.find(
      (r) => r.figure === 'Per-call latency p50, governed vs the heavier peer (agent-sample shape)',
    )!;
    expect(call.measured).toBe('92 ms vs 80 ms = 1.15× (paired by round: median 1.12×, range 0.9–1.3×)');
    expect(call.met).toBeNull();
    const tp = rows.find((r) =>
      r.figure.startsWith('Against the heavier peer (agent-sample shape) at concurrency 10'),
    )!;
    expect(tp.measured).toBe('8.4 vs 9 runs/s = 0.93×; 66 vs 33 ms = 2×; 376 vs 278 MB = 1.35×');
  });

  it('gives the latency and throughput tables a peer column computed from the cells', () => {
    const tables = detailTables(withPeer);
    expect(tables).toContain('| Phase | Governed | Bare | Peer |');
    expect(tables).toContain('| **per call** (decide + tool + record) | 92 / 138 | 90 / 135 | 80 / 120 |');
    expect(tables).toContain(
      '| 10 | 1 | 8.4 · 66 · 376 | 7.8 · 38 · 262 | 9 · 33 · 278 | 1.08× · 1.74× · 1.44× | 0.93× · 2× · 1.35× |',
    );
    // A different measurement, a different sentence: nothing is written in.
    const slower = {
      ...withPeer.throughput,
      cells: [...oldThroughput.cells, cell('peer', 10, 4.2, 66, 376)],
    };
    expect(throughputSideBySide([slower]).join('\n')).toContain(
      '| 4.2 · 66 · 376 | 1.08× · 1.74× · 1.44× | 2× · 1× · 1× |',
    );
  });
});

describe('bench report, the governed AI SDK agent beside the AI SDK peer', () => {
  const over = (a: ThroughputCell, b: ThroughputCell) => ({
    runsPerSecond: Math.round((a.runsPerSecond / b.runsPerSecond) * 100) / 100,
    workerCpuPerRun: Math.round((a.cpuMsPerRun.worker / b.cpuMsPerRun.worker) * 100) / 100,
    rssPeak: Math.round((a.rssMb.peak / b.rssMb.peak) * 100) / 100,
  });
  const withAiSdk = (governedAiSdk: ThroughputCell): ThroughputFigures => {
    const aisdk = cell('aisdk', 10, 5, 50, 400);
    return {
      ...oldThroughput,
      cells: [...oldThroughput.cells, aisdk, governedAiSdk],
      ratios: [{ ...oldThroughput.ratios[0]!, aiSdkGovernedOverPeer: over(governedAiSdk, aisdk) }],
    };
  };

  it('prints the governed AI SDK agent over the AI SDK peer from the two cells', () => {
    const t = withAiSdk(cell('aisdk-governed', 10, 4, 60, 300));
    const row = figureRows({ throughput: t }, 60, false).find((r) =>
      r.figure.startsWith('Governed AI SDK against the AI SDK peer (@temporalio/ai-sdk, plain activities)'),
    )!;
    expect(row.measured).toBe('4 vs 5 runs/s = 0.8×; 60 vs 50 ms = 1.2×; 300 vs 400 MB = 0.75×');
    expect(throughputSideBySide([t]).join('\n')).toContain('| Governed AI SDK / AI SDK peer |');
    expect(throughputSideBySide([t]).join('\n')).toMatch(/\| 0\.8× · 1\.2× · 0\.75× \|$/m);
    // Another measurement, another sentence.
    const faster = withAiSdk(cell('aisdk-governed', 10, 10, 25, 200));
    const row2 = figureRows({ throughput: faster }, 60, false).find((r) => r.figure.startsWith('Governed AI SDK'))!;
    expect(row2.measured).toBe('10 vs 5 runs/s = 2×; 25 vs 50 ms = 0.5×; 200 vs 400 MB = 0.5×');
  });

  it('leaves the row and the column out when the run measured no governed AI SDK cell', () => {
    expect(figureRows({ throughput: oldThroughput }, 60, false).some((r) => /Governed AI SDK/.test(r.figure))).toBe(
      false,
    );
    expect(throughputSideBySide([withPeer.throughput]).join('\n')).not.toContain('Governed AI SDK');
  });
});

describe('worker RSS over one long run', () => {
  const replayCase = (kind: Kind, events: number, rss?: { first: number; last: number }): ReplayCase => ({
    kind,
    targetEvents: events,
    turns: Math.round(events / 12),
    events,
    generationSeconds: 80,
    firstMs: 5000,
    warmMs: [],
    warmMedianMs: 5000,
    eventsPerSecond: 2000,
    growth: { firstTenthBytesPerTurn: 4900, lastTenthBytesPerTurn: 4900, firstTenthTurnMs: 90, lastTenthTurnMs: 90 },
    ...(rss ? { workerRss: { samples: 80, firstTenthMb: rss.first, lastTenthMb: rss.last } } : {}),
  });
  const rowsFor = (cases: ReplayCase[]) =>
    figureRows({ replay: { fixedCostMs: 80, cases } }, 60, false).filter((r) =>
      r.figure.startsWith('Worker RSS during'),
    );

  it('reads the longest run of each kind, and calls the governed worker flat only within 5% of where it started', () => {
    const flat = rowsFor([
      replayCase('governed', 1008, { first: 240, last: 400 }),
      replayCase('governed', 10008, { first: 250, last: 260 }),
      replayCase('bare', 10007, { first: 220, last: 300 }),
    ]);
    expect(flat).toEqual([
      {
        figure: 'Worker RSS during one governed run of 10008 events (80 readings, 1 s apart: first vs last tenth)',
        measured: '250 → 260 MB (+10 MB)',
        target: 'flat (within 5%)',
        met: true,
      },
      expect.objectContaining({ measured: '220 → 300 MB (+80 MB)', met: null }),
    ]);
    const growing = rowsFor([replayCase('governed', 10008, { first: 250, last: 270 })]);
    expect(growing).toEqual([expect.objectContaining({ measured: '250 → 270 MB (+20 MB)', met: false })]);
  });

  it('prints no such row for results written before the readings existed', () => {
    expect(rowsFor([replayCase('governed', 10008), replayCase('bare', 10007)])).toEqual([]);
  });
});

describe('worker memory as a worker serves runs', () => {
  const served = (kind: 'governed' | 'bare', rss: number[], failed = 0) => ({
    kind,
    runsPerBatch: 100,
    concurrency: 10,
    failed,
    readings: rss.map((r, i) => ({ runsServed: (i + 1) * 100, rssMb: r, heapUsedMb: 40 + i })),
  });
  const rowsFor = (runsServed: ReturnType<typeof served>[]) =>
    figureRows({ memory: { runsServed } }, 60, false).filter((r) => r.figure.startsWith('Worker RSS as one worker'));

  it('compares the last batch with the second (the first warms up), and calls governed flat only within 5%', () => {
    expect(rowsFor([served('governed', [250, 300, 320, 310]), served('bare', [200, 250, 290])])).toEqual([
      {
        figure:
          'Worker RSS as one worker serves governed runs (4 batches of 100 at concurrency 10: after the second vs the last; the first warms up)',
        measured: '300 → 310 MB (+10 MB; after each batch 250, 300, 320, 310 MB; main-thread heap 41 → 43 MB)',
        target: 'flat (within 5%)',
        met: true,
      },
      expect.objectContaining({
        measured: '250 → 290 MB (+40 MB; after each batch 200, 250, 290 MB; main-thread heap 41 → 42 MB)',
        met: null,
      }),
    ]);
    expect(rowsFor([served('governed', [250, 300, 330])])).toEqual([expect.objectContaining({ met: false })]);
  });

  it('never calls a batch with failed runs flat, and prints nothing from fewer than three readings', () => {
    expect(rowsFor([served('governed', [300, 300, 300], 2)])).toEqual([
      expect.objectContaining({
        measured: '300 → 300 MB (+0 MB; after each batch 300, 300, 300 MB; main-thread heap 41 → 42 MB); 2 runs failed',
        met: false,
      }),
    ]);
    expect(rowsFor([served('governed', [300, 300])])).toEqual([]);
  });
});

describe('the heap of one cached workflow', () => {
  const rowFor = (perInstance?: { kind: 'governed' | 'bare'; kb: number }[]) =>
    figureRows(
      {
        memory: {
          runsServed: [],
          ...(perInstance
            ? {
                perInstance: perInstance.map((p) => ({
                  kind: p.kind,
                  count: 200,
                  kbPerWorkflow: p.kb,
                  msPerWorkflow: 2,
                })),
              }
            : {}),
        },
      },
      60,
      false,
    ).filter((r) => r.figure.startsWith('Heap one cached workflow'));

  it('prints the governed and bare instances side by side, from the measurement', () => {
    expect(
      rowFor([
        { kind: 'governed', kb: 71 },
        { kind: 'bare', kb: 29 },
      ]),
    ).toEqual([expect.objectContaining({ measured: '71 KB vs 29 KB (created in 2 vs 2 ms)', met: null })]);
  });

  it('prints nothing for results written before it, or with one side missing', () => {
    expect(rowFor()).toEqual([]);
    expect(rowFor([{ kind: 'governed', kb: 71 }])).toEqual([]);
  });
});

describe('a long governed run at its defaults', () => {
  const rowFor = (first: number, last: number) =>
    figureRows(
      {
        memory: {
          runsServed: [],
          longRunAtDefaults: {
            turns: 832,
            runs: 6,
            events: 10_060,
            seconds: 85,
            samples: 85,
            firstTenthMb: first,
            lastTenthMb: last,
            mainHeapMb: { before: 47.7, after: 44.5 },
          },
        },
      },
      60,
      false,
    ).filter((r) => r.figure.startsWith('Worker RSS during one governed run of 832 turns at its defaults'));

  it('says how many runs the chain took and calls it flat only within 5%', () => {
    expect(rowFor(280, 290)).toEqual([
      {
        figure:
          'Worker RSS during one governed run of 832 turns at its defaults (10060 events over 6 runs: continue-as-new every 2,000; on a warmed-up worker after a collection; first vs last tenth of 85 readings)',
        measured: '280 → 290 MB (+10 MB; main-thread heap after a collection 47.7 → 44.5 MB)',
        target: 'flat (within 5%)',
        met: true,
      },
    ]);
    expect(rowFor(280, 300)).toEqual([
      expect.objectContaining({
        measured: '280 → 300 MB (+20 MB; main-thread heap after a collection 47.7 → 44.5 MB)',
        met: false,
      }),
    ]);
  });
});

describe('the ablation table', () => {
  const cell = (name: string, worker: number, byRound: number[]): Ablation => ({
    name,
    kind: 'bare',
    bundle: 'bare',
    runs: 40,
    runsPerSecond: 15,
    cpuMsPerRun: { worker, server: 60, wallet: 3, total: worker + 63 },
    eventsPerRun: 23,
    rounds: byRound.length,
    workerCpuMsByRound: byRound,
  });
  const table = (cells: Ablation[]) =>
    detailTables({}, { workers: [], ablations: cells, replay: { events: 0, ms: 0, threads: [] } })
      .split('\n')
      .filter((l) => l.startsWith('| bare') || l.startsWith('### Ablations'));

  it("prices each cell against the bare cell's worker CPU, and says how many rounds the medians are of", () => {
    expect(
      table([cell('bare', 30, [30, 29, 33]), cell('bare + 1 activity before the first model call', 39, [40, 39, 37])]),
    ).toEqual([
      '### Ablations at concurrency 10 (one cost added to the bare loop at a time; medians of 3 rounds)',
      '| bare | 15 | 30 + 60 + 3 = 93 | 1× (rounds: 30, 29, 33 ms) | 23 |',
      '| bare + 1 activity before the first model call | 15 | 39 + 60 + 3 = 102 | 1.3× (rounds: 40, 39, 37 ms) | 23 |',
    ]);
  });

  it("adds each cell's bytes per run when the run measured them", () => {
    const lines = detailTables(
      {},
      {
        workers: [],
        ablations: [
          { ...cell('bare', 30, [30]), bytesPerRun: 4241 },
          { ...cell('bare + bytes', 33, [33]), bytesPerRun: 12302 },
        ],
        replay: { events: 0, ms: 0, threads: [] },
      },
    )
      .split('\n')
      .filter((l) => l.startsWith('| '));
    expect(lines.slice(0, 1)[0]).toMatch(/\| Events · bytes per run \|$/);
    expect(lines.slice(1)).toEqual([
      '| bare | 15 | 30 + 60 + 3 = 93 | 1× | 23 · 4241 B |',
      '| bare + bytes | 15 | 33 + 60 + 3 = 96 | 1.1× | 23 · 12302 B |',
    ]);
  });

  it('prints one measurement without rounds, as results before the rounds did', () => {
    expect(table([cell('bare', 30, [30])])[1]).toBe('| bare | 15 | 30 + 60 + 3 = 93 | 1× | 23 |');
  });

  describe("with the SDK's stack-trace hook off in some cells", () => {
    const hookCells = (governedOn: number, bareOff: number, governedOff: number): Ablation[] => [
      { ...cell('bare', 30, [30]), reference: true },
      { ...cell('governed', governedOn, [governedOn]), kind: 'governed', bundle: 'governed' },
      { ...cell('bare, hook off', bareOff, [bareOff]), stackTraceHook: 'off', reference: true },
      {
        ...cell('governed, hook off', governedOff, [governedOff]),
        kind: 'governed',
        bundle: 'governed',
        stackTraceHook: 'off',
      },
    ];
    const lines = (cells: Ablation[]) =>
      detailTables({}, { workers: [], ablations: cells, replay: { events: 0, ms: 0, threads: [] } })
        .split('\n')
        .filter((l) => /^\| (bare|governed)|^Governed over bare|^### Ablations/.test(l));

    it('compares each cell with the reference cell of its own hook setting, and prices the hook from the two ratios', () => {
      expect(lines(hookCells(48, 25, 35))).toEqual([
        "### Ablations at concurrency 10 (each cell against the bare cell run with the same setting of the SDK's stack-trace hook)",
        '| bare | 15 | 30 + 60 + 3 = 93 | 1× | 23 |',
        '| governed | 15 | 48 + 60 + 3 = 111 | 1.6× | 23 |',
        '| bare, hook off | 15 | 25 + 60 + 3 = 88 | 1× | 23 |',
        '| governed, hook off | 15 | 35 + 60 + 3 = 98 | 1.4× | 23 |',
        "Governed over bare, worker CPU per run: 1.6× with the SDK's stack-trace hook, 1.4× without it (the hook is 0.2× of bare's worker CPU, 33% of the gap).",
      ]);
    });

    it('reads the sentence from the cells: change one, it changes', () => {
      expect(lines(hookCells(48, 25, 45)).at(-1)).toBe(
        "Governed over bare, worker CPU per run: 1.6× with the SDK's stack-trace hook, 1.8× without it (the hook is -0.2× of bare's worker CPU, -33% of the gap).",
      );
    });

    it('prints no sentence without a hook-off governed cell (older results)', () => {
      expect(lines(hookCells(48, 25, 35).slice(0, 3)).filter((l) => l.startsWith('Governed over'))).toEqual([]);
    });
  });
});

describe("the worker profile's bound for Ledgerloop's own code", () => {
  const thread = (busyMsPerRun: number, bundleMs: number, activitiesMs: number, workflow: boolean) => ({
    isWorkflowThread: workflow,
    busyMs: busyMsPerRun * 30,
    busyMsPerRun,
    byCategory: { 'workflow bundle': bundleMs, 'ledgerloop activities': activitiesMs, idle: 1000 },
    inclusive: {},
    topSelf: [],
  });
  const profile = (gWorkflow: number, gBundleMs: number) => ({
    workers: [
      {
        kind: 'governed' as const,
        runs: 30,
        seconds: 3,
        threads: [thread(24, 0, 24, false), thread(gWorkflow, gBundleMs, 0, true)],
      },
      { kind: 'bare' as const, runs: 30, seconds: 2, threads: [thread(20, 0, 6, false), thread(18, 60, 0, true)] },
    ],
    ablations: [],
    replay: { events: 0, ms: 0, threads: [] },
  });
  const boundLine = (p: ReturnType<typeof profile>) =>
    detailTables({}, p as never)
      .split('\n')
      .filter((l) => l.startsWith('Busy per run'));

  it("prints the governed worker's busy time with its own code priced at the bare worker's, over bare's", () => {
    // governed 24 + 36 = 60 ms, own (24 + 180) / 30 = 6.8 ms; bare 38 ms, own (6 + 60) / 30 = 2.2 ms.
    expect(boundLine(profile(36, 180))).toEqual([
      "Busy per run, all threads: governed 60 ms, bare 38 ms (1.58×). Their workflow bundles and activities' own code: 6.8 ms governed, 2.2 ms bare. If the governed ones cost what the bare ones do: 55.4 ms, 1.46× bare.",
    ]);
  });

  it('moves with the measured bundle time', () => {
    expect(boundLine(profile(36, 390))[0]).toContain(
      '13.8 ms governed, 2.2 ms bare. If the governed ones cost what the bare ones do: 48.4 ms, 1.27× bare.',
    );
  });
});

describe("replay with the SDK's stack-trace hook on and off", () => {
  const c = (kind: 'governed' | 'bare', stackHook: 'on' | 'off', events: number, warmMedianMs: number) => ({
    kind,
    stackHook,
    events,
    msEach: [warmMedianMs * 2, warmMedianMs, warmMedianMs],
    warmMedianMs,
  });
  const lines = (cases: ReturnType<typeof c>[]) =>
    detailTables({}, { workers: [], ablations: [], replay: { events: 0, ms: 0, threads: [] }, replayByHook: cases })
      .split('\n')
      .filter((l) => /^\| (governed|bare) \||^Governed over bare, replay/.test(l));

  it('prints each replay and the per-event ratio for each hook setting, from the measured times', () => {
    expect(
      lines([
        c('governed', 'on', 1000, 600),
        c('bare', 'on', 1000, 400),
        c('governed', 'off', 1000, 330),
        c('bare', 'off', 1000, 220),
      ]),
    ).toEqual([
      '| governed | on | 1000 | 1200, 600, 600 | 600 | 600 |',
      '| bare | on | 1000 | 800, 400, 400 | 400 | 400 |',
      '| governed | off | 1000 | 660, 330, 330 | 330 | 330 |',
      '| bare | off | 1000 | 440, 220, 220 | 220 | 220 |',
      'Governed over bare, replay time per event: 1.5× with the hook, 1.5× without it.',
    ]);
  });

  it('takes the ratio per event, so histories of different lengths compare fairly', () => {
    expect(
      lines([
        c('governed', 'on', 500, 300),
        c('bare', 'on', 1000, 400),
        c('governed', 'off', 500, 100),
        c('bare', 'off', 1000, 400),
      ]).at(-1),
    ).toBe('Governed over bare, replay time per event: 1.5× with the hook, 0.5× without it.');
  });

  it('prints nothing for results written before it', () => {
    expect(lines([])).toEqual([]);
  });
});

describe('replay in a running replay worker', () => {
  const replayCase = (kind: Kind, events: number, warmMedianMs: number, inWorker?: number): ReplayCase => ({
    kind,
    targetEvents: 1_000,
    turns: Math.round(events / 12),
    events,
    generationSeconds: 8,
    firstMs: warmMedianMs,
    warmMs: [warmMedianMs],
    warmMedianMs,
    ...(inWorker !== undefined ? { inWorkerMs: [inWorker], inWorkerMedianMs: inWorker } : {}),
    eventsPerSecond: 2000,
    growth: { firstTenthBytesPerTurn: 4900, lastTenthBytesPerTurn: 4900, firstTenthTurnMs: 90, lastTenthTurnMs: 90 },
  });
  const rowsFor = (cases: ReplayCase[]) =>
    figureRows({ replay: { fixedCostMs: 80, cases } }, 60, false).filter((r) => r.figure.startsWith('Replay time per'));

  it('adds the per-event ratio of the in-worker replays beside the one that loads the bundle each time', () => {
    expect(rowsFor([replayCase('governed', 1000, 600, 400), replayCase('bare', 1000, 300, 250)])).toEqual([
      expect.objectContaining({ measured: '2× (600 ms for 1000 vs 300 ms for 1000)', met: false }),
      {
        figure:
          'Replay time per event in a running replay worker (bundle loaded), governed / bare, at about 1000 events',
        measured: '1.6× (400 ms for 1000 vs 250 ms for 1000)',
        target: '—',
        met: null,
      },
    ]);
  });

  it('prints only the first ratio for results written before the in-worker replays', () => {
    expect(rowsFor([replayCase('governed', 1000, 600), replayCase('bare', 1000, 300)])).toHaveLength(1);
  });
});
