/** The figures table: each figure with its measured value, its target and whether the target is met. */
import type { ConsoleFigures } from './sections/console';
import type { QuotaCeilingFigures } from './sections/quota-ceiling';
import {
  attributionShares,
  metricOf,
  SHARE_METRICS,
  type AttributionFigures,
  type ShareMetric,
} from './sections/attribution';
import type { HistoryFigures } from './sections/history-cost';
import type { Ablation, ProfileFigures, ReplayByHook, WorkerProfile } from './sections/profile';
import type { LatencyFigures } from './sections/latency';
import type { MemoryFigures } from './sections/memory';
import type { ReplayFigures } from './sections/replay';
import type { RetryFigures } from './sections/retries';
import type { GovernedOver, ThroughputFigures } from './sections/throughput';
import { localModelRows, type LocalModelFigures } from './sections/local-model';
import type { ProfileSummary } from './lib/cpuprofile';
import { round, type Summary } from './lib/stats';
import { PEER_KINDS, type PeerKind } from './lib/runs';

export interface Row {
  readonly figure: string;
  readonly measured: string;
  readonly target: string;
  /** true / false, or null for a figure reported without a target. */
  readonly met: boolean | null;
}

export interface AllFigures {
  latency?: LatencyFigures;
  throughput?: ThroughputFigures;
  /** Throughput passes with different numbers of worker hosts (`--hosts 1,3`); `throughput` is the first. */
  throughputByHosts?: ThroughputFigures[];
  history?: HistoryFigures;
  replay?: ReplayFigures;
  memory?: MemoryFigures;
  retries?: RetryFigures;
  model?: LocalModelFigures;
  console?: ConsoleFigures;
  attribution?: AttributionFigures;
  quotaCeiling?: QuotaCeilingFigures;
}

const ms = (x: number): string => `${round(x, 1)} ms`;

export function figureRows(f: AllFigures, totalSeconds: number, quick: boolean): Row[] {
  const rows: Row[] = [];
  if (f.latency) {
    const { governed: g, bare: b, ratio } = f.latency;
    rows.push({
      figure: 'Per-call latency p50, governed vs bare',
      measured: `${ms(g.call.p50)} vs ${ms(b.call.p50)} = ${ratio.callP50}×`,
      target: '≤ 1.3×',
      met: ratio.callP50 <= 1.3,
    });
    rows.push({
      figure: 'Per-call latency p95, governed vs bare',
      measured: `${ms(g.call.p95)} vs ${ms(b.call.p95)} = ${ratio.callP95}×`,
      target: '≤ 1.3×',
      met: ratio.callP95 <= 1.3,
    });
    rows.push({
      figure: 'Per-call latency p50, paired by round (median; range)',
      measured: `${f.latency.pairedCallP50Ratio.median}× (${f.latency.pairedCallP50Ratio.min}–${f.latency.pairedCallP50Ratio.max}× over ${f.latency.rounds} rounds)`,
      target: '≤ 1.3×',
      met: f.latency.pairedCallP50Ratio.median <= 1.3,
    });
    rows.push({
      figure: 'Per-turn latency p50 (model call included)',
      measured: `${ms(g.turn.p50)} vs ${ms(b.turn.p50)} = ${ratio.turnP50}×`,
      target: '—',
      met: null,
    });
    rows.push(...latencyPeerRows(f.latency));
  }
  for (const t of f.throughputByHosts ?? (f.throughput ? [f.throughput] : []))
    rows.push(...throughputRows(t, f.throughputByHosts !== undefined));
  if (f.throughputByHosts) rows.push(...hostScalingRows(f.throughputByHosts));
  if (f.quotaCeiling) rows.push(...quotaCeilingRows(f.quotaCeiling));
  if (f.history) {
    const { governed: g, bare: b } = f.history;
    rows.push({
      figure: 'History events per turn, turns 2–20',
      measured: `${g.laterTurnEventsMax} at most (bare ${b.laterTurnEventsMax}); mean over all 20 turns ${g.eventsPerTurn}`,
      target: '≤ 12',
      met: g.laterTurnEventsMax <= 12,
    });
    rows.push({
      figure: 'History events, first turn of a run',
      measured: `${g.firstTurnEvents} (bare ${b.firstTurnEvents})`,
      target: '≤ 12',
      met: g.firstTurnEvents <= 12,
    });
    const longest = f.history.runs.filter((r) => r.kind === 'governed').reduce((a, c) => (c.turns > a.turns ? c : a));
    const drift = Math.abs(g.bytesPerTurnGrowthAfterFirst) * (longest.turns - 2);
    rows.push({
      figure: 'History bytes per turn (turns 2 → 20)',
      measured: `${g.bytesPerTurn} B (bare ${b.bytesPerTurn} B); turn 1 ${g.firstTurnBytes} B, turn ${longest.turns} ${g.lastTurnBytes} B, slope from turn 2 ${g.bytesPerTurnGrowthAfterFirst} B/turn`,
      target: 'flat (drift ≤ 5% over the run)',
      met: drift <= 0.05 * g.bytesPerTurn,
    });
  }
  if (f.replay) {
    for (const c of f.replay.cases) {
      const is10k = c.kind === 'governed' && c.targetEvents >= 10_000;
      rows.push({
        figure: `Replay, ${c.kind} history of ${c.events} events (${c.turns} turns in one run)`,
        measured: `${ms(c.warmMedianMs)} (${c.eventsPerSecond} events/s; generated in ${c.generationSeconds} s)`,
        target: is10k ? '10k events < 1 s' : '—',
        met: is10k ? c.warmMedianMs < 1000 : null,
      });
    }
    // Governed over bare at the same length (issue #16: at most 1.5x the bare loop's replay time).
    for (const g of f.replay.cases.filter((c) => c.kind === 'governed')) {
      const b = f.replay.cases.find((c) => c.kind === 'bare' && c.targetEvents === g.targetEvents);
      if (!b) continue;
      const perEvent = g.warmMedianMs / g.events / (b.warmMedianMs / b.events);
      rows.push({
        figure: `Replay time per event, governed / bare, at about ${g.targetEvents} events`,
        measured: `${round(perEvent)}× (${ms(g.warmMedianMs)} for ${g.events} vs ${ms(b.warmMedianMs)} for ${b.events})`,
        target: '≤ 1.5×',
        met: perEvent <= 1.5,
      });
      if (g.inWorkerMedianMs !== undefined && b.inWorkerMedianMs !== undefined) {
        const inWorker = g.inWorkerMedianMs / g.events / (b.inWorkerMedianMs / b.events);
        rows.push({
          figure: `Replay time per event in a running replay worker (bundle loaded), governed / bare, at about ${g.targetEvents} events`,
          measured: `${round(inWorker)}× (${ms(g.inWorkerMedianMs)} for ${g.events} vs ${ms(b.inWorkerMedianMs)} for ${b.events})`,
          target: '—',
          met: null,
        });
      }
    }
    if (quick)
      rows.push({
        figure: 'Replay of a 10k-event history',
        measured: 'not run in --quick',
        target: '< 1 s',
        met: null,
      });
    const long = f.replay.cases.filter((c) => c.kind === 'governed').reduce((a, c) => (c.events > a.events ? c : a));
    const g = long.growth;
    rows.push({
      figure: `Bytes per turn as one run grows (${long.turns} turns: first vs last tenth)`,
      measured: `${g.firstTenthBytesPerTurn} → ${g.lastTenthBytesPerTurn} B`,
      target: 'flat (within 5%)',
      met: Math.abs(g.lastTenthBytesPerTurn - g.firstTenthBytesPerTurn) <= 0.05 * g.firstTenthBytesPerTurn,
    });
    rows.push({
      figure: `Turn duration as one run grows (${long.turns} turns: first vs last tenth)`,
      measured: `${g.firstTenthTurnMs} → ${g.lastTenthTurnMs} ms`,
      target: '—',
      met: null,
    });
    // Issue #16: worker memory flat over a 10k-event run (the longest run of each kind).
    for (const kind of ['governed', 'bare'] as const) {
      const runs = f.replay.cases.filter(
        (c) => c.kind === kind && c.workerRss !== undefined && c.workerRss.samples > 0,
      );
      if (runs.length === 0) continue;
      const c = runs.reduce((a, b) => (b.events > a.events ? b : a));
      const r = c.workerRss!;
      const drift = r.lastTenthMb - r.firstTenthMb;
      rows.push({
        figure: `Worker RSS during one ${kind} run of ${c.events} events (${r.samples} readings, 1 s apart: first vs last tenth)`,
        measured: `${r.firstTenthMb} → ${r.lastTenthMb} MB (${drift >= 0 ? '+' : ''}${round(drift, 1)} MB)`,
        target: kind === 'governed' ? 'flat (within 5%)' : '—',
        met: kind === 'governed' ? Math.abs(drift) <= 0.05 * r.firstTenthMb : null,
      });
    }
  }
  if (f.memory) {
    // Issue #16: worker memory flat as a worker serves runs. The first batch warms the worker up (its JIT, its
    // workflow threads' heaps); from the second on, the level should hold.
    for (const m of f.memory.runsServed) {
      const level = m.readings[1];
      const last = m.readings[m.readings.length - 1];
      if (!level || !last || m.readings.length < 3) continue;
      const drift = last.rssMb - level.rssMb;
      rows.push({
        figure: `Worker RSS as one worker serves ${m.kind} runs (${m.readings.length} batches of ${m.runsPerBatch} at concurrency ${m.concurrency}: after the second vs the last; the first warms up)`,
        measured:
          `${level.rssMb} → ${last.rssMb} MB (${drift >= 0 ? '+' : ''}${round(drift, 1)} MB; after each batch ` +
          `${m.readings.map((r) => r.rssMb).join(', ')} MB; main-thread heap ${level.heapUsedMb} → ${last.heapUsedMb} MB)` +
          (m.failed > 0 ? `; ${m.failed} runs failed` : ''),
        target: m.kind === 'governed' ? 'flat (within 5%)' : '—',
        met: m.kind === 'governed' ? m.failed === 0 && Math.abs(drift) <= 0.05 * level.rssMb : null,
      });
    }
    const l = f.memory.longRunAtDefaults;
    if (l) {
      const drift = l.lastTenthMb - l.firstTenthMb;
      rows.push({
        figure: `Worker RSS during one governed run of ${l.turns} turns at its defaults (${l.events} events over ${l.runs} runs: continue-as-new every 2,000; on a warmed-up worker after a collection; first vs last tenth of ${l.samples} readings)`,
        measured:
          `${l.firstTenthMb} → ${l.lastTenthMb} MB (${drift >= 0 ? '+' : ''}${round(drift, 1)} MB` +
          (l.mainHeapMb
            ? `; main-thread heap after a collection ${l.mainHeapMb.before} → ${l.mainHeapMb.after} MB)`
            : ')'),
        target: 'flat (within 5%)',
        met: Math.abs(drift) <= 0.05 * l.firstTenthMb,
      });
    }
    const g = f.memory.perInstance?.find((h) => h.kind === 'governed');
    const b = f.memory.perInstance?.find((h) => h.kind === 'bare');
    if (g && b) {
      rows.push({
        figure: 'Heap one cached workflow holds before its first activation (its module instances and the SDK runtime)',
        measured: `${g.kbPerWorkflow} KB vs ${b.kbPerWorkflow} KB (created in ${g.msPerWorkflow} vs ${b.msPerWorkflow} ms)`,
        target: '—',
        met: null,
      });
    }
  }
  if (f.retries) {
    for (const r of f.retries.ratios) {
      const l = f.retries.cases.find((c) => c.pattern === r.pattern && c.setup === 'ledgerloop')!;
      const s = f.retries.cases.find((c) => c.pattern === r.pattern && c.setup === 'stacked')!;
      rows.push({
        figure: `Requests per logical call, dependency ${r.pattern === 'outage' ? 'down' : r.pattern === 'alternating' ? 'failing every other request' : 'failing 50% at random'}`,
        measured:
          `Ledgerloop ${l.meanRequests} (max ${l.maxRequests}; ${l.succeeded}/${l.logicalCalls} succeeded` +
          `${l.notSent ? `, ${l.notSent} not sent: circuit open` : ''}) vs stacked ${s.meanRequests} (max ${s.maxRequests}; ` +
          `${s.succeeded}/${s.logicalCalls} succeeded) = ${r.stackedOverLedgerloop}×`,
        target: 'Ledgerloop ≤ 3 per call',
        met: l.maxRequests <= 3,
      });
    }
  }
  if (f.attribution) rows.push(...attributionRows(f.attribution));
  if (f.model) rows.push(...localModelRows(f.model));
  rows.push({
    figure: `Total benchmark time (${quick ? '--quick' : 'full'})`,
    measured: `${round(totalSeconds / 60, 1)} min`,
    target: '< 15 min',
    met: totalSeconds < 15 * 60,
  });
  if (f.console) rows.push(...consoleRows(f.console));
  return rows;
}

/** What each peer is, as a row names it. */
export const PEER_LABELS: Readonly<Record<PeerKind, string>> = {
  peer: 'the heavier peer (agent-sample shape)',
  aisdk: 'the AI SDK peer (@temporalio/ai-sdk, plain activities)',
  'aisdk-governed': 'the governed AI SDK agent (@temporalio/ai-sdk, governedTools)',
};

/** Governed against each peer the run measured: ratios only, no target. */
function latencyPeerRows(l: NonNullable<AllFigures['latency']>): Row[] {
  const { governed: g } = l;
  return Object.entries(l.peers ?? {}).flatMap(([peer, v]) => {
    if (!v) return [];
    const { phases: p, governedOver: r, pairedCallP50: paired } = v;
    const label = PEER_LABELS[peer as PeerKind];
    return [
      {
        figure: `Per-call latency p50, governed vs ${label}`,
        measured:
          `${ms(g.call.p50)} vs ${ms(p.call.p50)} = ${r.callP50}×` +
          ` (paired by round: median ${paired.median}×, range ${paired.min}–${paired.max}×)`,
        target: '—',
        met: null,
      },
      {
        figure: `Per-call latency p95, governed vs ${label}`,
        measured: `${ms(g.call.p95)} vs ${ms(p.call.p95)} = ${r.callP95}×`,
        target: '—',
        met: null,
      },
      {
        figure: `Per-turn latency p50, governed vs ${label} (model call included)`,
        measured: `${ms(g.turn.p50)} vs ${ms(p.turn.p50)} = ${r.turnP50}×`,
        target: '—',
        met: null,
      },
    ];
  });
}

/** The throughput rows of one pass; `labelled`: say how many worker hosts the pass ran. */
function throughputRows(t: ThroughputFigures, labelled: boolean): Row[] {
  const on = labelled ? `, ${t.hosts} worker host${t.hosts === 1 ? '' : 's'}` : '';
  const pairs = t.ratios.map((r) => ({
    r,
    g: t.cells.find((c) => c.kind === 'governed' && c.concurrency === r.concurrency)!,
    b: t.cells.find((c) => c.kind === 'bare' && c.concurrency === r.concurrency)!,
  }));
  // Load-independent view of the same figure: the box is CPU-bound, so capacity is 1 / (CPU per run) of the
  // stack's own processes; other processes on a shared box cannot move it the way they move runs/s.
  const cpu = (c: ThroughputFigures['cells'][number]): number =>
    c.cpuMsPerRun.worker + c.cpuMsPerRun.server + c.cpuMsPerRun.wallet;
  return [
    ...pairs.map(({ r, g, b }) => ({
      figure: `Throughput at concurrency ${r.concurrency}${on} (runs/s)`,
      measured: `${g.runsPerSecond} vs ${b.runsPerSecond} = ${r.governedOverBare}×`,
      target: '≥ 0.8×',
      met: r.governedOverBare >= 0.8,
    })),
    ...pairs.map(({ r, g, b }) => ({
      figure: `Capacity at concurrency ${r.concurrency}${on}: CPU per run (worker + server + wallet)`,
      measured: `${round(cpu(g), 1)} vs ${round(cpu(b), 1)} ms → ${round(cpu(b) / cpu(g))}×`,
      target: '≥ 0.8×',
      met: cpu(b) / cpu(g) >= 0.8,
    })),
    ...pairs.map(({ r, g, b }) => ({
      figure: `Worker RSS peak at concurrency ${r.concurrency}${on}`,
      measured: `${g.rssMb.peak} vs ${b.rssMb.peak} MB = ${r.rssPeakRatio}×`,
      target: '—',
      met: null,
    })),
    ...throughputPeerRows(t, on),
  ];
}

/**
 * Governed against each peer, one row per concurrency the pass measured both at, and the governed AI SDK agent
 * against the AI SDK peer (the same agent, its tool plain: what governedTools cost): ratios, no target.
 */
function throughputPeerRows(t: ThroughputFigures, on: string): Row[] {
  type Cell = ThroughputFigures['cells'][number];
  const at = (kind: string, concurrency: number): Cell | undefined =>
    t.cells.find((c) => c.kind === kind && c.concurrency === concurrency);
  const row = (a: Cell | undefined, b: Cell | undefined, o: GovernedOver | undefined, who: string): Row[] =>
    !a || !b || !o
      ? []
      : [
          {
            figure: `${who} at concurrency ${a.concurrency}${on}: runs/s, worker CPU per run, worker RSS peak`,
            measured:
              `${a.runsPerSecond} vs ${b.runsPerSecond} runs/s = ${o.runsPerSecond}×; ` +
              `${a.cpuMsPerRun.worker} vs ${b.cpuMsPerRun.worker} ms = ${o.workerCpuPerRun}×; ` +
              `${a.rssMb.peak} vs ${b.rssMb.peak} MB = ${o.rssPeak}×`,
            target: '—',
            met: null,
          },
        ];
  return t.ratios.flatMap((r) => [
    ...Object.entries(r.overPeers ?? {}).flatMap(([peer, o]) =>
      row(at('governed', r.concurrency), at(peer, r.concurrency), o, `Against ${PEER_LABELS[peer as PeerKind]}`),
    ),
    ...row(
      at('aisdk-governed', r.concurrency),
      at('aisdk', r.concurrency),
      r.aiSdkGovernedOverPeer,
      `${PEER_NAMES['aisdk-governed']} against ${PEER_LABELS.aisdk}`,
    ),
  ]);
}

/**
 * Throughput as worker hosts are added, per kind and concurrency (no target: a figure of the deployment): runs/s
 * with N hosts against N − 1 (what the added worker brought) and against N × one host's (how far from linear).
 */
function hostScalingRows(passes: readonly ThroughputFigures[]): Row[] {
  const sorted = [...passes].sort((a, b) => a.hosts - b.hosts);
  const one = sorted.find((p) => p.hosts === 1);
  const rows: Row[] = [];
  for (const [i, p] of sorted.entries()) {
    const before = sorted[i - 1];
    if (!before) continue;
    for (const cell of p.cells) {
      const prev = before.cells.find((c) => c.kind === cell.kind && c.concurrency === cell.concurrency);
      const base = one?.cells.find((c) => c.kind === cell.kind && c.concurrency === cell.concurrency);
      if (!prev) continue;
      const added = p.hosts - before.hosts;
      rows.push({
        figure: `${cell.kind} throughput at concurrency ${cell.concurrency}: ${p.hosts} worker hosts vs ${before.hosts}`,
        measured:
          `${cell.runsPerSecond} vs ${prev.runsPerSecond} runs/s: ${round((cell.runsPerSecond - prev.runsPerSecond) / added)} runs/s per added worker` +
          (base ? `; ${round(cell.runsPerSecond / (p.hosts * base.runsPerSecond))} of ${p.hosts} × one host's` : ''),
        target: '—',
        met: null,
      });
    }
  }
  return rows;
}

/** The quota's ceiling for one tenant, per number of hosts reserving at once. */
function quotaCeilingRows(q: QuotaCeilingFigures): Row[] {
  return q.cases.map((c) => ({
    figure: `Quota ceiling for one tenant (${q.store} store): ${c.hosts} host(s) × ${c.slotsPerHost} reservation loops, ${c.seconds} s`,
    measured:
      `${c.perSecond} debits/s admitted (by second: ${c.bySecond.join(', ')}); one reservation p50 ${c.latencyMs.p50} ms, p95 ${c.latencyMs.p95} ms` +
      (c.failed || c.refused ? `; ${c.failed} failed, ${c.refused} refused` : ''),
    target: '—',
    met: null,
  }));
}

export function markdownTable(rows: readonly Row[]): string {
  const met = (m: boolean | null): string => (m === null ? '—' : m ? 'yes' : '**no**');
  return [
    '| Figure | Measured (governed vs bare) | Target | Met? |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.figure} | ${r.measured} | ${r.target} | ${met(r.met)} |`),
  ].join('\n');
}

/** The evidence tables behind "Where the time goes" (lab/bench/results/latest.md). */
/** One thread's profile as Markdown paragraphs: self time by category (`unit` names it), inclusive time, the top `top` functions. */
function threadProfileLines(t: ProfileSummary, unit: string, top: number): string[] {
  const pairs = (o: Readonly<Record<string, number>>): string =>
    Object.entries(o)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const topSelf = t.topSelf
    .slice(0, top)
    .map((x) => `${x.fn} ${x.ms}`)
    .join('; ');
  return [
    `By category (${unit}): ${pairs(t.byCategory)}.`,
    '',
    `Inclusive (ms): ${pairs(t.inclusive)}.`,
    '',
    `Top self: ${topSelf}.`,
    '',
  ];
}

/**
 * Governed, bare and the peers at each concurrency, side by side (only when the run measured a peer): runs/s,
 * worker CPU per run and worker RSS peak of each, and governed over each of the others.
 */
export function throughputSideBySide(passes: readonly ThroughputFigures[]): string[] {
  const peers = PEER_KINDS.filter((k) => passes.some((t) => t.cells.some((c) => c.kind === k)));
  if (peers.length === 0) return [];
  // The governed AI SDK agent over the AI SDK peer: the same agent with and without governedTools.
  const aiSdkPair = peers.includes('aisdk') && peers.includes('aisdk-governed');
  type Cell = ThroughputFigures['cells'][number];
  const show = (c: Cell | undefined): string =>
    c ? `${c.runsPerSecond} · ${c.cpuMsPerRun.worker} · ${c.rssMb.peak}` : '—';
  const over = (a: Cell | undefined, b: Cell | undefined): string =>
    a && b
      ? `${round(a.runsPerSecond / b.runsPerSecond)}× · ${round(a.cpuMsPerRun.worker / b.cpuMsPerRun.worker)}× · ${round(a.rssMb.peak / b.rssMb.peak)}×`
      : '—';
  const out = [
    '### Throughput side by side: runs/s · worker CPU per run (ms) · worker RSS peak (MB)',
    '',
    `| Concurrency | Worker hosts | Governed | Bare | ${peers.map((p) => PEER_NAMES[p]).join(' | ')} | Governed / bare | ${peers.map((p) => `Governed / ${PEER_NAMES[p]}`).join(' | ')} |${aiSdkPair ? ` ${PEER_NAMES['aisdk-governed']} / ${PEER_NAMES.aisdk} |` : ''}`,
    `|---|---|---|---|${peers.map(() => '---|').join('')}---|${peers.map(() => '---|').join('')}${aiSdkPair ? '---|' : ''}`,
  ];
  for (const t of passes) {
    for (const concurrency of [...new Set(t.cells.map((c) => c.concurrency))]) {
      const of = (kind: Cell['kind']): Cell | undefined =>
        t.cells.find((c) => c.kind === kind && c.concurrency === concurrency);
      const [g, b] = [of('governed'), of('bare')];
      out.push(
        `| ${concurrency} | ${t.hosts ?? 1} | ${show(g)} | ${show(b)} | ${peers.map((p) => show(of(p))).join(' | ')} | ${over(g, b)} | ${peers.map((p) => over(g, of(p))).join(' | ')} |${aiSdkPair ? ` ${over(of('aisdk-governed'), of('aisdk'))} |` : ''}`,
      );
    }
  }
  out.push('');
  return out;
}

/** Short column names of the peers. */
const PEER_NAMES: Readonly<Record<PeerKind, string>> = {
  peer: 'Peer',
  aisdk: 'AI SDK peer',
  'aisdk-governed': 'Governed AI SDK',
};

export function detailTables(f: AllFigures, profile?: ProfileFigures): string {
  const out: string[] = [];
  if (f.attribution) out.push(...attributionTable(f.attribution));
  if (f.latency) {
    const { governed: g, bare: b } = f.latency;
    const peers = PEER_KINDS.flatMap((k) => {
      const v = f.latency?.peers?.[k];
      return v ? [{ name: PEER_NAMES[k], p: v.phases }] : [];
    });
    out.push('### Per-call latency by phase (p50 / p95, ms; server event timestamps)', '');
    out.push(
      `| Phase | Governed | Bare |${peers.map((x) => ` ${x.name} |`).join('')}`,
      `|---|---|---|${peers.map(() => '---|').join('')}`,
    );
    const phases: Array<[string, keyof typeof g]> = [
      ['model call (plan scheduled → completed)', 'plan'],
      ['decide (plan completed → tool scheduled)', 'decide'],
      ['tool activity (scheduled → completed)', 'tool'],
      ['record (tool completed → next WFT completed)', 'record'],
      ['**per call** (decide + tool + record)', 'call'],
      ['per turn', 'turn'],
    ];
    const cell = (s: Summary): string => `${round(s.p50, 1)} / ${round(s.p95, 1)}`;
    for (const [label, k] of phases)
      out.push(`| ${label} | ${cell(g[k])} | ${cell(b[k])} |${peers.map((x) => ` ${cell(x.p[k])} |`).join('')}`);
    out.push('');
  }
  if (f.throughput) {
    out.push('### Throughput cells', '');
    out.push(
      '| Kind | Concurrency | Worker hosts | Runs | Runs/s | Run p50 (ms) | RSS idle / peak (MB) | CPU per run: worker / server / wallet (ms) | WFT > 5 s |',
    );
    out.push('|---|---|---|---|---|---|---|---|---|');
    for (const c of (f.throughputByHosts ?? [f.throughput]).flatMap((t) => t.cells)) {
      out.push(
        `| ${c.kind} | ${c.concurrency} | ${c.hosts ?? 1} | ${c.runs} | ${c.runsPerSecond} | ${c.runLatencyMs.p50} | ${c.rssMb.idle} / ${c.rssMb.peak} | ` +
          `${c.cpuMsPerRun.worker} / ${c.cpuMsPerRun.server} / ${c.cpuMsPerRun.wallet} | ${c.slowWorkflowTasks} |`,
      );
    }
    out.push('');
    out.push(...throughputSideBySide(f.throughputByHosts ?? [f.throughput]));
  }
  if (f.history) {
    const h = f.history;
    const types = [...new Set([...Object.keys(h.governedTurnEventTypes), ...Object.keys(h.bareTurnEventTypes)])];
    out.push('### One turn of history, by event type (events / bytes)', '');
    out.push('| Event type | Governed | Bare |', '|---|---|---|');
    for (const t of types) {
      out.push(
        `| ${t} | ${h.governedTurnEventTypes[t] ?? 0} / ${h.governedTurnBytesByType[t] ?? 0} | ${h.bareTurnEventTypes[t] ?? 0} / ${h.bareTurnBytesByType[t] ?? 0} |`,
      );
    }
    out.push('');
    if (h.governedTurnEvents.length > 0) {
      out.push(
        `One governed turn, event by event: ${h.governedTurnEvents
          .map((e) => `${e.type}${e.activity ? ` (${e.activity})` : ''} ${e.bytes} B`)
          .join(' · ')}.`,
        '',
      );
    }
    out.push(
      '| Run | Events | Bytes | Events per turn | Bytes per turn | Fixed events (start + end) |',
      '|---|---|---|---|---|---|',
    );
    for (const r of h.runs) {
      out.push(
        `| ${r.kind} ${r.turns} turn(s) | ${r.events} | ${r.bytes} | ${r.eventsPerTurn} | ${r.bytesPerTurn} | ${r.preamble.events + r.tail.events} |`,
      );
    }
    out.push('');
  }
  if (profile) {
    const rounds = profile.ablations[0]?.rounds ?? 1;
    const hookOff = profile.ablations.some((a) => a.stackTraceHook === 'off');
    const withBytes = profile.ablations.some((a) => a.bytesPerRun !== undefined);
    const how = hookOff
      ? "each cell against the bare cell run with the same setting of the SDK's stack-trace hook"
      : 'one cost added to the bare loop at a time';
    out.push(`### Ablations at concurrency 10 (${how}${rounds > 1 ? `; medians of ${rounds} rounds` : ''})`, '');
    out.push(
      `| Cell | Runs/s | CPU per run: worker + server + wallet = total (ms) | Worker CPU, × bare${hookOff ? ' (the same hook setting)' : ''} | ${withBytes ? 'Events · bytes per run' : 'Events per run'} |`,
      '|---|---|---|---|---|',
    );
    for (const a of profile.ablations) {
      const c = a.cpuMsPerRun;
      const ref = ablationReference(profile.ablations, a);
      const times = ref && ref.cpuMsPerRun.worker > 0 ? `${round(c.worker / ref.cpuMsPerRun.worker)}×` : '—';
      const byRound =
        (a.workerCpuMsByRound?.length ?? 0) > 1 ? ` (rounds: ${a.workerCpuMsByRound!.join(', ')} ms)` : '';
      out.push(
        `| ${a.name} | ${a.runsPerSecond} | ${c.worker} + ${c.server} + ${c.wallet} = ${c.total} | ${times}${byRound} | ${a.eventsPerRun}${a.bytesPerRun !== undefined ? ` · ${a.bytesPerRun} B` : ''} |`,
      );
    }
    out.push('');
    out.push(...hookShareLines(profile.ablations));
    out.push('### Worker CPU profile at concurrency 10 (measured runs only)', '');
    out.push(...ownCodeBoundLines(profile.workers));
    for (const w of profile.workers) {
      for (const t of w.threads) {
        out.push(
          `**${w.kind}, ${t.isWorkflowThread ? 'workflow thread' : 'main thread'}**: ${t.busyMsPerRun} ms per run busy.`,
          '',
        );
        out.push(...threadProfileLines(t, `ms over ${w.runs} runs`, 8));
      }
    }
    const r = profile.replay;
    out.push(`### Replay profile (${r.events} events, ${r.ms} ms under the profiler)`, '');
    for (const t of r.threads) {
      out.push(...threadProfileLines(t, 'ms', 10));
    }
    const b = profile.replayBare;
    if (b) {
      out.push(`### Replay profile, bare (${b.events} events, ${b.ms} ms under the profiler)`, '');
      for (const t of b.threads) out.push(...threadProfileLines(t, 'ms', 10));
    }
    out.push(...replayByHookLines(profile.replayByHook ?? []));
  }
  return out.join('\n');
}

/** The cell `a` is compared with: the reference of its hook setting (older results: the cell named `bare`). */
export function ablationReference(cells: readonly Ablation[], a: Ablation): Ablation | undefined {
  if (!cells.some((c) => c.reference)) return cells.find((c) => c.name === 'bare');
  return cells.find((c) => c.reference && c.stackTraceHook === a.stackTraceHook);
}

/** Governed over bare with the SDK's stack-trace hook on and off, when the run measured both. */
function hookShareLines(cells: readonly Ablation[]): string[] {
  const ratio = (hook: 'off' | undefined): number | undefined => {
    const g = cells.find((c) => c.kind === 'governed' && c.stackTraceHook === hook);
    const ref = g && ablationReference(cells, g);
    return g && ref && ref.cpuMsPerRun.worker > 0 ? g.cpuMsPerRun.worker / ref.cpuMsPerRun.worker : undefined;
  };
  const on = ratio(undefined);
  const off = ratio('off');
  if (on === undefined || off === undefined) return [];
  return [
    `Governed over bare, worker CPU per run: ${round(on)}× with the SDK's stack-trace hook, ${round(off)}× without it ` +
      `(the hook is ${round(on - off)}× of bare's worker CPU, ${on > 1 ? round((100 * (on - off)) / (on - 1), 0) : 0}% of the gap).`,
    '',
  ];
}

/**
 * A bound from the windowed worker profiles: the governed worker's busy time per run if its workflow bundle
 * (Ledgerloop's workflow code with the libraries and SDK runtime bundled in it) and its activities' own code cost
 * what the bare worker's do, over the bare worker's busy time. It removes more than Ledgerloop's code alone (the
 * bundle carries the SDK's workflow runtime), so the ratio it gives is a floor for cuts in that code.
 */
export function ownCodeBound(
  workers: readonly WorkerProfile[],
):
  { governedMs: number; ownMs: number; bareOwnMs: number; bareMs: number; boundMs: number; ratio: number } | undefined {
  const sum = (w: WorkerProfile | undefined, f: (t: WorkerProfile['threads'][number]) => number): number =>
    (w?.threads ?? []).reduce((n, t) => n + f(t), 0);
  const own = (w: WorkerProfile | undefined): number =>
    sum(w, (t) => ((t.byCategory['workflow bundle'] ?? 0) + (t.byCategory['ledgerloop activities'] ?? 0)) / w!.runs);
  const g = workers.find((w) => w.kind === 'governed');
  const b = workers.find((w) => w.kind === 'bare');
  if (!g || !b) return undefined;
  const governedMs = sum(g, (t) => t.busyMsPerRun);
  const bareMs = sum(b, (t) => t.busyMsPerRun);
  if (bareMs <= 0) return undefined;
  const ownMs = own(g);
  const bareOwnMs = own(b);
  const boundMs = governedMs - ownMs + bareOwnMs;
  return { governedMs, ownMs, bareOwnMs, bareMs, boundMs, ratio: boundMs / bareMs };
}

function ownCodeBoundLines(workers: readonly WorkerProfile[]): string[] {
  const b = ownCodeBound(workers);
  if (!b) return [];
  return [
    `Busy per run, all threads: governed ${round(b.governedMs, 1)} ms, bare ${round(b.bareMs, 1)} ms ` +
      `(${round(b.governedMs / b.bareMs)}×). Their workflow bundles and activities' own code: ${round(b.ownMs, 1)} ms ` +
      `governed, ${round(b.bareOwnMs, 1)} ms bare. If the governed ones cost what the bare ones do: ` +
      `${round(b.boundMs, 1)} ms, ${round(b.ratio)}× bare.`,
    '',
  ];
}

/** Governed over bare per event, replayed in a running replay worker with the hook `on` or `off`. */
export function replayRatioByHook(cases: readonly ReplayByHook[], hook: 'on' | 'off'): number | undefined {
  const perEvent = (kind: 'governed' | 'bare'): number | undefined => {
    const c = cases.find((r) => r.kind === kind && r.stackHook === hook);
    return c && c.events > 0 ? c.warmMedianMs / c.events : undefined;
  };
  const g = perEvent('governed');
  const b = perEvent('bare');
  return g !== undefined && b !== undefined && b > 0 ? g / b : undefined;
}

function replayByHookLines(cases: readonly ReplayByHook[]): string[] {
  if (cases.length === 0) return [];
  const out = [
    "### Replay in a running replay worker, the SDK's stack-trace hook on and off (no profiler)",
    '',
    '| Kind | Hook | Events | Each replay (ms; the first loads the bundle) | Median after the first (ms) | ms per 1k events |',
    '|---|---|---|---|---|---|',
  ];
  for (const c of cases) {
    const per1k = c.events > 0 ? round((1000 * c.warmMedianMs) / c.events, 1) : '—';
    out.push(`| ${c.kind} | ${c.stackHook} | ${c.events} | ${c.msEach.join(', ')} | ${c.warmMedianMs} | ${per1k} |`);
  }
  out.push('');
  const on = replayRatioByHook(cases, 'on');
  const off = replayRatioByHook(cases, 'off');
  if (on !== undefined && off !== undefined) {
    out.push(`Governed over bare, replay time per event: ${round(on)}× with the hook, ${round(off)}× without it.`, '');
  }
  return out;
}

/** The operator console's rows (lab/bench/sections/console.ts): reported without targets. */
export function consoleRows(c: ConsoleFigures): Row[] {
  const lat = (s: Summary): string => `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, max ${ms(s.max)} over ${s.n}`;
  return [
    {
      figure: `Console: approval requested → in the live inbox (empty inbox, refresh ${c.refreshMs} ms)`,
      measured: lat(c.toInboxEmpty),
      target: '—',
      met: null,
    },
    {
      figure: `Console: approval requested → in the live inbox (${c.pending} pending)`,
      measured: lat(c.toInboxLoaded),
      target: '—',
      met: null,
    },
    {
      figure: `Console: GET /api/inbox with ${c.pending} pending (${c.itemsListed} listed), cold / warm p50`,
      measured: `${ms(c.loadColdMs)} / ${ms(c.loadWarm.p50)}`,
      target: '—',
      met: null,
    },
    {
      figure: `Console: of which the visibility list of ${c.pending} runs, p50`,
      measured: ms(c.visibilityList.p50),
      target: '—',
      met: null,
    },
  ];
}

const METRIC_LABELS: Readonly<Record<ShareMetric, string>> = {
  workerCpuMsPerRun: 'worker CPU per run',
  rssPeakMb: 'worker RSS peak',
  bytesPerRun: 'history bytes of a one-debit run',
  bytesPerTurn: 'history bytes per turn',
  coldReplayCpuMs: 'replay CPU, cold',
  warmReplayCpuMs: 'replay CPU, warm',
  heapKbPerWorkflow: 'heap per cached workflow',
};

const pct = (x: number | undefined): string => (x === undefined ? '—' : `${round(100 * x, 0)}%`);

/** The attribution's summary rows: the reference over bare, and what the switches leave unexplained. */
export function attributionRows(a: AttributionFigures): Row[] {
  const shares = attributionShares(a.cells);
  const bare = a.cells.find((c) => c.id === 'bare');
  const ref = a.cells.find((c) => c.id === 'governed');
  if (!shares || !bare || !ref) return [];
  const ratio = (m: ShareMetric): string => `${round(metricOf(ref, m) / metricOf(bare, m))}×`;
  return [
    {
      figure: `Attribution: governed with every mechanism on over bare (${a.rounds} round(s), concurrency ${a.concurrency})`,
      measured: SHARE_METRICS.map((m) => `${METRIC_LABELS[m]} ${ratio(m)}`).join('; '),
      target: '—',
      met: null,
    },
    {
      figure: 'Attribution: share of the gap to bare the switches leave unexplained',
      measured: SHARE_METRICS.map((m) => `${METRIC_LABELS[m]} ${pct(shares.unexplained[m])}`).join('; '),
      target: '—',
      met: null,
    },
  ];
}

/** The attribution table: every cell's figures with their ratio to bare, each switch's share of the gap. */
export function attributionTable(a: AttributionFigures): string[] {
  const shares = attributionShares(a.cells);
  const bare = a.cells.find((c) => c.id === 'bare');
  const ref = a.cells.find((c) => c.id === 'governed');
  if (!shares || !bare || !ref) return [];
  const value = (c: (typeof a.cells)[number], m: ShareMetric): string => {
    const v = metricOf(c, m);
    const b = metricOf(bare, m);
    return `${round(v, 1)} (${b > 0 ? round(v / b) : '—'}×)`;
  };
  const out = [
    `### Cost attribution (concurrency ${a.concurrency}, ${a.runsPerCell} one-debit runs per cell, ${a.rounds} round(s); medians)`,
    '',
    'Each switched cell is the governed run with every mechanism on, one mechanism switched off ("off") or done',
    'twice ("twice", for what the run cannot work without). A share is that mechanism\'s cost over the gap between',
    'the governed run and bare: for "off", governed minus the cell; for "twice", the cell minus governed.',
    '',
    `| Cell | How | ${SHARE_METRICS.map((m) => `${METRIC_LABELS[m]} (× bare) | share`).join(' | ')} | Events · bytes per run | Bundle KB |`,
    `|---|---|${SHARE_METRICS.map(() => '---|---|').join('')}---|---|`,
  ];
  for (const c of a.cells) {
    const share = shares.shares.find((x) => x.id === c.id);
    const cols = SHARE_METRICS.map((m) => `${value(c, m)} | ${share ? pct(share.ofGap[m]) : '—'}`);
    out.push(
      `| ${c.id === 'bare' || c.id === 'governed' ? c.mechanism : `${c.id}: ${c.mechanism}`} | ${c.how ?? '—'} | ${cols.join(' | ')} | ${c.eventsPerRun} · ${c.bytesPerRun} B | ${round(c.bundleBytes / 1024, 0)} |`,
    );
  }
  out.push(
    `| **Sum of the shares** | | ${SHARE_METRICS.map((m) => `| ${pct(shares.shares.reduce((n, x) => n + (x.ofGap[m] ?? 0), 0))}`).join(' | ')} | | |`,
    `| **Left unexplained** | | ${SHARE_METRICS.map((m) => `| ${pct(shares.unexplained[m])}`).join(' | ')} | | |`,
    '',
    `The gap to bare: ${SHARE_METRICS.map((m) => `${METRIC_LABELS[m]} ${round(shares.gap[m], 1)}`).join(', ')} ` +
      '(ms, MB, B, B, ms, ms, KB). The governed cell round by round (worker CPU ms per run / RSS peak MB): ' +
      `${ref.byRound.map((r) => `${r.workerCpuMsPerRun} / ${r.rssPeakMb}`).join(', ')}; a share smaller than that ` +
      "spread is not a finding. Replays are of each cell's own long run " +
      `(${ref.longRun.turns} turns, ${ref.replay.events} events governed, ${bare.replay.events} bare), by its own bundle.`,
    '',
    'What each switch changes:',
    '',
    ...a.cells.flatMap((c) => (c.what ? [`- \`${c.id}\` (${c.how}): ${c.what}.`] : [])),
    '',
  );
  return out;
}
