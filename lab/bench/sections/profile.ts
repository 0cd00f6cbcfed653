/**
 * Where the time goes. Four views of the governed path, each next to the bare one:
 *
 *   1. CPU per run by process (worker, dev server, wallet): from the throughput cells (throughput.ts);
 *   2. `--cpu-prof` of a worker running governed (then bare) runs at concurrency 10, cut to the measured runs:
 *      per thread, self time by category, top functions, inclusive time of the governance functions;
 *   3. ablations at concurrency 10, fresh worker per cell, three rounds: by default the bare loop, the bare loop
 *      plus an opening activity (what the governed opening cost before it moved into the first model call), the
 *      bare loop plus the governed run's bytes, and the governed loop; BENCH_ABLATIONS adds others (that opening's
 *      two halves, the same opening as a local activity, the governed loop's promises, both loops with the SDK's
 *      stack-trace promise hook off: lab/bench/stack-hook-off.cjs): runs/s, CPU per run, events and bytes per run;
 *   4. `--cpu-prof` of a process replaying the long governed history, then a bare one of the same length:
 *      workflow code alone, no I/O; then both replayed by one replay worker with the hook on and off.
 */
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { runJsonChild } from '../lib/child-json';
import { analyzeProfile, type ProfileSummary } from '../lib/cpuprofile';
import type { History } from '../lib/history';
import { processCpuMs } from '../lib/proc-cpu';
import { runLoop, type Kind, type LoopSpec } from '../lib/runs';
import { account, type BundleKind } from '../lib/stack';
import { median, round } from '../lib/stats';
import { startWorker } from '../lib/worker-handle';
import { closedLoop, sampleHistories } from './throughput';
import { DEFAULT_TUNING, type BenchContext } from './common';

/** Functions whose inclusive time is reported (workflow code, SDK entry points, activities). */
export const INCLUSIVE_NAMES = [
  'agentRun',
  'execute',
  'turns',
  'callAll',
  'bareLoop',
  'importWorkflows',
  'initRuntime',
  '__webpack_require__',
  'prepare',
  'decide',
  'recordIntent',
  'runCall',
  'admitResult',
  'publish',
  'runResult',
  'append',
  'apply',
  'snapshot',
  'projectionHash',
  'hashCanonical',
  'canonicalJson',
  'sha256Hex',
  'deriveOperationKey',
  'deriveLogicalCallId',
  'unknownCalls',
  'upsertSearchAttributes',
  'setCurrentDetails',
  'safeParse',
  'activate',
  'concludeActivation',
  'planTurn',
  'dispatchTool',
  'authorizeCall',
  'signCapability',
  'barePlan',
  'bareDebit',
  'send',
] as const;

const BUNDLE_MARK = '/bundle-';

export interface WorkerProfile {
  readonly kind: Kind;
  readonly runs: number;
  readonly seconds: number;
  readonly threads: readonly (ProfileSummary & { readonly busyMsPerRun: number })[];
}

export interface Ablation {
  readonly name: string;
  readonly kind: Kind;
  readonly bundle: BundleKind;
  /**
   * `off`: the workers ran without the SDK's stack-trace promise hook, and the cell is compared with the bare cell
   * that ran the same way. Absent: the hook was on (every cell before this field existed).
   */
  readonly stackTraceHook?: 'off';
  /** The cell the others are compared with (one per hook setting). Absent in older results: the cell named `bare`. */
  readonly reference?: true;
  /** Workflow threads that skipped the hook in each round (a hook-off cell is refused when one round shows none). */
  readonly hookOffThreadsByRound?: readonly number[];
  readonly runs: number;
  readonly runsPerSecond: number;
  readonly cpuMsPerRun: {
    readonly worker: number;
    readonly server: number;
    readonly wallet: number;
    readonly total: number;
  };
  readonly eventsPerRun: number;
  /** Encoded bytes of one run's history (a sample of the cell's runs). Absent in older results. */
  readonly bytesPerRun?: number;
  /**
   * Rounds the cell was measured in (the cells run in turn, round after round); the figures above are the
   * medians over the rounds. Absent (one round) in older results.
   */
  readonly rounds?: number;
  /** Worker CPU per run in each round, in order. */
  readonly workerCpuMsByRound?: readonly number[];
}

export interface ProfileFigures {
  readonly workers: readonly WorkerProfile[];
  readonly ablations: readonly Ablation[];
  readonly replay: ReplayProfile;
  /** The bare loop's history of about the same length, replayed the same way. Absent in older results. */
  readonly replayBare?: ReplayProfile;
  /** The same two histories replayed in a running replay worker with the SDK's stack-trace hook on and off. */
  readonly replayByHook?: readonly ReplayByHook[];
}

/**
 * One history replayed REPLAY_REPEATS times by one replay worker (no profiler) with the SDK's stack-trace hook
 * on or off; the figure is the median of the replays after the first (the bundle loaded).
 */
export interface ReplayByHook {
  readonly kind: BundleKind;
  readonly stackHook: 'on' | 'off';
  readonly events: number;
  readonly msEach: readonly number[];
  readonly warmMedianMs: number;
}

const REPLAY_REPEATS = 4;

export interface ReplayProfile {
  readonly events: number;
  readonly ms: number;
  readonly threads: readonly ProfileSummary[];
}

/** A folder to keep the raw .cpuprofile files in (one subfolder per profiled process), with their windows. */
export const KEEP_PROFILES_ENV = 'BENCH_KEEP_PROFILES';

function profilesIn(dir: string, window: { fromUs: number; toUs: number }): ProfileSummary[] {
  const keep = process.env[KEEP_PROFILES_ENV];
  if (keep) {
    const to = path.join(keep, path.basename(dir));
    cpSync(dir, to, { recursive: true });
    writeFileSync(path.join(to, 'window.json'), JSON.stringify(window));
  }
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) =>
      analyzeProfile(path.join(dir, f), { bundleName: BUNDLE_MARK, inclusiveNames: INCLUSIVE_NAMES, window }),
    );
}

async function profiledWorkers(ctx: BenchContext): Promise<WorkerProfile[]> {
  const runs = ctx.quick ? 20 : 30;
  const out: WorkerProfile[] = [];
  for (const kind of ['governed', 'bare'] as const) {
    const dir = path.join(ctx.stack.dir, `prof-${kind}`);
    mkdirSync(dir, { recursive: true });
    const tq = `bench-prof-${kind}-${ctx.stamp}`;
    const worker = await startWorker(ctx.stack.workerConfig(tq, DEFAULT_TUNING, kind), { cpuProfDir: dir });
    let seconds = 0;
    let window = { fromUs: 0, toUs: 0 };
    try {
      await closedLoop(ctx, kind, tq, `${tq}-warm`, 10, 10);
      // Only the measured runs count: start-up (module loading) and warm-up fall outside the window.
      const fromUs = (await worker.rss()).monoUs;
      seconds = (await closedLoop(ctx, kind, tq, tq, 10, runs)).seconds;
      window = { fromUs, toUs: (await worker.rss()).monoUs };
    } finally {
      await worker.stop();
    }
    const threads = profilesIn(dir, window).map((t) => ({ ...t, busyMsPerRun: round(t.busyMs / runs, 2) }));
    out.push({ kind, runs, seconds: round(seconds, 2), threads });
    for (const t of threads) {
      ctx.log(
        `profile ${kind} ${t.isWorkflowThread ? 'workflow thread' : 'main thread'}: ${t.busyMsPerRun} ms CPU per run; ` +
          `top ${t.topSelf
            .slice(0, 3)
            .map((f) => f.fn)
            .join(' | ')}`,
      );
    }
  }
  return out;
}

/** The ablation cells to run (comma-separated ids, below); default DEFAULT_ABLATIONS. */
export const ABLATIONS_ENV = 'BENCH_ABLATIONS';

interface AblationCell {
  readonly id: string;
  readonly name: string;
  readonly kind: Kind;
  readonly bundle: BundleKind;
  readonly extra: Partial<LoopSpec>;
  readonly hookOff?: true;
  readonly reference?: true;
}

/**
 * The bytes a governed one-turn run records beyond a bare one: 12,278 against 4,241 B in the history-cost section
 * of the full runs of sessions 11 and 12 (the opening's identity check and policy, the intent, keys, hashes,
 * capability and receipt evidence). The ablation's runs make one call each, so the padding rides on that call;
 * the table prints each cell's bytes per run beside governed's.
 */
export const EVIDENCE_BYTES_PER_CALL = 8_000;

/** A cell of the bare loop with `extra` added. */
function bareWith(id: string, name: string, extra: Partial<LoopSpec>): AblationCell {
  return { id, name, kind: 'bare', bundle: 'bare', extra };
}

const BARE: AblationCell = { ...bareWith('bare', 'bare', {}), reference: true };
const GOVERNED: AblationCell = { id: 'governed', name: 'governed', kind: 'governed', bundle: 'governed', extra: {} };

const ABLATION_CELLS: readonly AblationCell[] = [
  BARE,
  // What a governed run's opening added before any governance code ran, until the identity check moved into the
  // first model call's activity (patch `opening-in-first-plan`): the check's own round trip and the versioning
  // markers. Together they are the floor of a loop that verifies its principal in an activity of its own.
  bareWith('activity', 'bare + 1 activity before the first model call', { activityAtStart: true }),
  bareWith('markers', 'bare + 3 patch markers at the opening', { patchesAtStart: 3 }),
  bareWith('opening', 'bare + an opening activity (1 activity, 3 patch markers; no governance)', {
    activityAtStart: true,
    patchesAtStart: 3,
  }),
  bareWith('opening-local', 'bare + an opening local activity (1 marker, 3 patch markers; no governance)', {
    localActivityAtStart: true,
    patchesAtStart: 3,
  }),
  // What the SDK and the server charge for the evidence a governed turn records, with none of the work that makes it.
  bareWith('bytes', `bare + the governed run's bytes (${EVIDENCE_BYTES_PER_CALL} B of padding on its call)`, {
    evidenceBytesPerCall: EVIDENCE_BYTES_PER_CALL,
  }),
  // The promises alone: a replay of each loop counts 18 promises per turn made by workflow code in the governed
  // loop and 6 in the bare one (its steps are async functions); an empty async step awaited makes two.
  bareWith('promises', 'bare + 12 promises per turn (6 empty async steps)', { asyncStepsPerTurn: 6 }),
  GOVERNED,
  // What TS SDK 1.24 charges in its stack-trace hook, which has no switch: both loops again with the hook skipped
  // in their workflow threads. A measurement, never a configuration. (The profile section also replays both long
  // histories with the hook on and off, which moves less from run to run.)
  { ...BARE, id: 'hook-off', name: "bare, the SDK's stack-trace hook off", hookOff: true },
  { ...GOVERNED, id: 'hook-off', name: "governed, the SDK's stack-trace hook off", hookOff: true },
];

/**
 * Run by default: three rounds of every cell must fit the full run's time. The others (`activity`, `markers`,
 * `promises`, `hook-off`, and the per-call upserts and local activity of earlier passes through BareLoopInput)
 * are for reruns: `BENCH_ABLATIONS=bare,governed,hook-off npm run bench -- --only profile`.
 */
export const DEFAULT_ABLATIONS = ['bare', 'opening', 'bytes', 'governed'] as const;

/** The cells `spec` names (ids, comma-separated), in their table order; the bare cell is always in. */
export function ablationCells(spec: string | undefined): AblationCell[] {
  const ids = new Set(spec?.trim() ? spec.split(',').map((s) => s.trim()) : DEFAULT_ABLATIONS);
  const known = new Set(ABLATION_CELLS.map((c) => c.id));
  const unknown = [...ids].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new Error(`${ABLATIONS_ENV}: unknown cell(s) ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  }
  ids.add('bare');
  return ABLATION_CELLS.filter((c) => ids.has(c.id));
}

async function ablations(ctx: BenchContext): Promise<Ablation[]> {
  const runs = ctx.quick ? 30 : 40;
  const cells = ablationCells(process.env[ABLATIONS_ENV]);
  // Single cells vary by a tenth or more from one measurement to the next: every cell is measured in each of
  // several rounds (cells in turn, so a slow minute touches all of them alike) and the medians are reported.
  const rounds = ctx.quick ? 1 : 3;
  const measured: Array<Array<Omit<Ablation, 'name' | 'kind' | 'bundle' | 'runs'> & { hookOffThreads: number }>> =
    cells.map(() => []);
  for (let round_ = 0; round_ < rounds; round_++) {
    for (const [i, c] of cells.entries()) {
      const tq = `bench-abl-${round_}-${i}-${ctx.stamp}`;
      const worker = await startWorker(
        ctx.stack.workerConfig(tq, DEFAULT_TUNING, c.bundle),
        c.hookOff ? { stackTraceHook: { off: true, markFile: path.join(ctx.stack.dir, `${tq}.hook-off`) } } : {},
      );
      try {
        await closedLoop(ctx, c.kind, tq, `${tq}-warm`, 10, 10, c.extra);
        const hookOffThreads = worker.hookOffThreads();
        if (c.hookOff && hookOffThreads === 0) {
          throw new Error(
            `ablation "${c.name}": no workflow thread skipped the SDK's stack-trace hook, so this cell would measure ` +
              'the hook on (has @temporalio/worker changed how it installs it? see lab/bench/stack-hook-off.cjs)',
          );
        }
        worker.resetRss();
        const server0 = ctx.stack.server.cpuMs();
        const wallet0 = processCpuMs(ctx.stack.wallet.pid);
        const r = await closedLoop(ctx, c.kind, tq, tq, 10, runs, c.extra);
        const rss = await worker.rss();
        const done = runs - r.failed;
        const cpu = {
          worker: rss.cpuMs / done,
          server: (ctx.stack.server.cpuMs() - server0) / done,
          wallet: (processCpuMs(ctx.stack.wallet.pid) - wallet0) / done,
        };
        const sampled = await sampleHistories(ctx, tq, runs);
        const one = {
          runsPerSecond: done / r.seconds,
          cpuMsPerRun: { ...cpu, total: cpu.worker + cpu.server + cpu.wallet },
          eventsPerRun: sampled.eventsPerRun,
          ...(sampled.bytesPerRun !== undefined ? { bytesPerRun: sampled.bytesPerRun } : {}),
          hookOffThreads,
        };
        measured[i]!.push(one);
        ctx.log(
          `ablation "${c.name}" (round ${round_ + 1} of ${rounds}): ${round(one.runsPerSecond, 2)} runs/s, CPU per run ` +
            `worker ${round(cpu.worker, 1)} + server ${round(cpu.server, 1)} + wallet ${round(cpu.wallet, 1)} ms, ` +
            `${one.eventsPerRun} events (${one.bytesPerRun ?? '?'} B) per run` +
            (c.hookOff ? `, hook skipped in ${hookOffThreads} workflow thread(s)` : '') +
            (r.failed ? `, ${r.failed} failed: ${r.failures[0]}` : ''),
        );
      } finally {
        await worker.stop();
      }
    }
  }
  const out: Ablation[] = cells.map((c, i) => {
    const ms = measured[i]!;
    const med = (f: (m: (typeof ms)[number]) => number): number => round(median(ms.map(f)), 1);
    return {
      name: c.name,
      kind: c.kind,
      bundle: c.bundle,
      ...(c.hookOff ? { stackTraceHook: 'off' as const, hookOffThreadsByRound: ms.map((m) => m.hookOffThreads) } : {}),
      ...(c.reference ? { reference: true as const } : {}),
      runs,
      runsPerSecond: round(median(ms.map((m) => m.runsPerSecond)), 2),
      cpuMsPerRun: {
        worker: med((m) => m.cpuMsPerRun.worker),
        server: med((m) => m.cpuMsPerRun.server),
        wallet: med((m) => m.cpuMsPerRun.wallet),
        total: med((m) => m.cpuMsPerRun.total),
      },
      eventsPerRun: ms[0]!.eventsPerRun,
      ...(ms[0]!.bytesPerRun !== undefined ? { bytesPerRun: ms[0]!.bytesPerRun } : {}),
      rounds,
      workerCpuMsByRound: ms.map((m) => round(m.cpuMsPerRun.worker, 1)),
    };
  });
  return out;
}

function runReplayProc(
  ctx: BenchContext,
  historyFile: string,
  bundle: string,
  opts: { profDir?: string; repeat?: number; stackHook?: 'on' | 'off' } = {},
): Promise<{ events: number; ms: number; msEach: number[]; fromUs: number; toUs: number }> {
  return runJsonChild(
    path.join(__dirname, '..', 'replay-proc.ts'),
    [
      historyFile,
      bundle,
      ...(opts.repeat ? ['--repeat', String(opts.repeat)] : []),
      ...(opts.stackHook ? ['--stack-hook', opts.stackHook] : []),
    ],
    ['-r', 'tsx/cjs', ...(opts.profDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profDir] : [])],
    `replay-proc (${ctx.stack.dir})`,
  );
}

/** Both long histories replayed in a running replay worker, the hook on and off, the kinds and settings in turn. */
async function replaysByHook(ctx: BenchContext): Promise<ReplayByHook[]> {
  const out: ReplayByHook[] = [];
  for (const stackHook of ['on', 'off'] as const) {
    for (const kind of ['governed', 'bare'] as const) {
      const file = path.join(ctx.stack.dir, `long-history-${kind}.json`);
      const r = await runReplayProc(ctx, file, ctx.stack.bundles[kind], { repeat: REPLAY_REPEATS, stackHook });
      const warmMedianMs = round(median(r.msEach.slice(1)), 1);
      out.push({ kind, stackHook, events: r.events, msEach: r.msEach.map((m) => round(m, 1)), warmMedianMs });
      ctx.log(
        `replay of ${kind} ${r.events} events in a running replay worker, the SDK's stack-trace hook ${stackHook}: ` +
          `${out.at(-1)!.msEach.join(', ')} ms (median after the first ${warmMedianMs} ms)`,
      );
    }
  }
  return out;
}

export async function measureProfile(ctx: BenchContext, longHistoryIn?: History): Promise<ProfileFigures> {
  const { stack } = ctx;
  const workers = await profiledWorkers(ctx);
  const abl = await ablations(ctx);

  let longHistory = longHistoryIn;
  if (!longHistory) {
    const tq = `bench-prof-long-${ctx.stamp}`;
    const worker = await startWorker(stack.workerConfig(tq, DEFAULT_TUNING, 'governed'));
    try {
      const done = await runLoop(stack.client, 'governed', tq, `${tq}-run`, {
        turns: 60,
        account: account(9),
        maxHistoryEvents: 1_000_000,
      });
      longHistory = await done.handle.fetchHistory();
    } finally {
      await worker.stop();
    }
  }
  const replay = await profileReplay(ctx, 'governed', longHistory);
  // The bare loop at the same length (12 events a turn, 11 fixed): the two replay profiles side by side.
  const events = longHistory.events?.length ?? 0;
  const tq = `bench-prof-long-bare-${ctx.stamp}`;
  const worker = await startWorker(stack.workerConfig(tq, DEFAULT_TUNING, 'bare'));
  let bareHistory: History;
  try {
    const done = await runLoop(stack.client, 'bare', tq, `${tq}-run`, {
      turns: Math.max(1, Math.round((events - 11) / 12)),
      account: account(9),
      deadlineInMs: 60 * 60_000,
    });
    bareHistory = await done.handle.fetchHistory();
  } finally {
    await worker.stop();
  }
  const replayBare = await profileReplay(ctx, 'bare', bareHistory);
  const replayByHook = await replaysByHook(ctx);
  return { workers, ablations: abl, replay, replayBare, replayByHook };
}

async function profileReplay(ctx: BenchContext, kind: BundleKind, history: History): Promise<ReplayProfile> {
  const dir = path.join(ctx.stack.dir, kind === 'governed' ? 'prof-replay' : `prof-replay-${kind}`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(ctx.stack.dir, `long-history-${kind}.json`);
  writeFileSync(file, historyToJSON(history));
  const profiled = await runReplayProc(ctx, file, ctx.stack.bundles[kind], { profDir: dir });
  const threads = profilesIn(dir, { fromUs: profiled.fromUs, toUs: profiled.toUs });
  ctx.log(`profile: replay of ${kind} ${profiled.events} events took ${round(profiled.ms, 0)} ms under the profiler`);
  return { events: profiled.events, ms: round(profiled.ms, 1), threads };
}
