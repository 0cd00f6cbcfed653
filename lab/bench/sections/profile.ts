/**
 * Where the time goes. Four views of the governed path, each next to the bare one:
 *
 *   1. CPU per run by process (worker, dev server, wallet): from the throughput cells (throughput.ts);
 *   2. `--cpu-prof` of a worker running governed (then bare) runs at concurrency 10, cut to the measured runs:
 *      per thread, self time by category, top functions, inclusive time of the governance functions;
 *   3. ablations at concurrency 10, fresh worker per cell: the bare loop plus ONE governed cost (two
 *      search-attribute upserts per call; a local activity per call): runs/s, CPU per run, events per run;
 *   4. `--cpu-prof` of a process replaying the long governed history: workflow code alone, no I/O.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { analyzeProfile, type ProfileSummary } from '../lib/cpuprofile';
import type { History } from '../lib/history';
import { processCpuMs } from '../lib/proc-cpu';
import { runLoop, type Kind, type LoopSpec } from '../lib/runs';
import { account, type BundleKind } from '../lib/stack';
import { round } from '../lib/stats';
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
  readonly runs: number;
  readonly runsPerSecond: number;
  readonly cpuMsPerRun: {
    readonly worker: number;
    readonly server: number;
    readonly wallet: number;
    readonly total: number;
  };
  readonly eventsPerRun: number;
}

export interface ProfileFigures {
  readonly workers: readonly WorkerProfile[];
  readonly ablations: readonly Ablation[];
  readonly replay: { readonly events: number; readonly ms: number; readonly threads: readonly ProfileSummary[] };
}

function profilesIn(dir: string, window: { fromUs: number; toUs: number }): ProfileSummary[] {
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

async function ablations(ctx: BenchContext): Promise<Ablation[]> {
  const runs = ctx.quick ? 30 : 40;
  const cells: Array<{ name: string; kind: Kind; bundle: BundleKind; extra: Partial<LoopSpec> }> = [
    { name: 'bare', kind: 'bare', bundle: 'bare', extra: {} },
    { name: 'bare + 2 search-attribute upserts per call', kind: 'bare', bundle: 'bare', extra: { upsertsPerCall: 2 } },
    { name: 'bare + 1 local activity per call', kind: 'bare', bundle: 'bare', extra: { localActivityPerCall: true } },
    { name: 'governed', kind: 'governed', bundle: 'governed', extra: {} },
  ];
  const out: Ablation[] = [];
  for (const [i, c] of cells.entries()) {
    const tq = `bench-abl-${i}-${ctx.stamp}`;
    const worker = await startWorker(ctx.stack.workerConfig(tq, DEFAULT_TUNING, c.bundle));
    try {
      await closedLoop(ctx, c.kind, tq, `${tq}-warm`, 10, 10, c.extra);
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
      const a: Ablation = {
        name: c.name,
        kind: c.kind,
        bundle: c.bundle,
        runs,
        runsPerSecond: round(done / r.seconds, 2),
        cpuMsPerRun: {
          worker: round(cpu.worker, 1),
          server: round(cpu.server, 1),
          wallet: round(cpu.wallet, 1),
          total: round(cpu.worker + cpu.server + cpu.wallet, 1),
        },
        eventsPerRun: sampled.eventsPerRun,
      };
      out.push(a);
      ctx.log(
        `ablation "${c.name}": ${a.runsPerSecond} runs/s, CPU per run worker ${a.cpuMsPerRun.worker} + server ${a.cpuMsPerRun.server} ` +
          `+ wallet ${a.cpuMsPerRun.wallet} = ${a.cpuMsPerRun.total} ms, ${a.eventsPerRun} events per run` +
          (r.failed ? `, ${r.failed} failed: ${r.failures[0]}` : ''),
      );
    } finally {
      await worker.stop();
    }
  }
  return out;
}

function runReplayProc(
  ctx: BenchContext,
  historyFile: string,
  bundle: string,
  profDir?: string,
): Promise<{ events: number; ms: number; fromUs: number; toUs: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, '..', 'replay-proc.ts'), [historyFile, bundle], {
      execArgv: ['-r', 'tsx/cjs', ...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [])],
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) =>
      code === 0
        ? resolve(
            JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
              events: number;
              ms: number;
              fromUs: number;
              toUs: number;
            },
          )
        : reject(new Error(`replay-proc exited ${code} (${ctx.stack.dir})`)),
    );
  });
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
  const dir = path.join(stack.dir, 'prof-replay');
  mkdirSync(dir, { recursive: true });
  const file = path.join(stack.dir, 'long-history.json');
  writeFileSync(file, historyToJSON(longHistory));
  const profiled = await runReplayProc(ctx, file, stack.bundles.governed, dir);
  const threads = profilesIn(dir, { fromUs: profiled.fromUs, toUs: profiled.toUs });
  ctx.log(`profile: replay of ${profiled.events} events took ${round(profiled.ms, 0)} ms under the profiler`);
  return {
    workers,
    ablations: abl,
    replay: { events: profiled.events, ms: round(profiled.ms, 1), threads },
  };
}
