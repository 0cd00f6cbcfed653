/**
 * `npm run bench [-- --quick] [-- --only latency,throughput,quota,history,replay,memory,retries,attribution,profile]`
 *   `[-- --db-on-disk]`
 *   `[-- --only model]`: the local model under governed runs (lab/bench/sections/local-model.ts; installs it first)
 *   `[-- --only console]`: the operator console's inbox (lab/bench/sections/console.ts; about 5 minutes)
 *   `[-- --long-run]`: the memory section also runs one governed run of 10k events at its defaults (about 100 s)
 * `npm run bench -- --target cluster [--quick] [--hosts 1,2,3]`: the same figures on the local cluster (Temporal on
 * PostgreSQL, lab/cluster/): latency, throughput with 1, 2 and 3 worker hosts, and the quota's ceiling for one tenant
 * on the cluster's PostgreSQL (lab/bench/results/latest-cluster.*).
 *
 * Measures what Ledgerloop's governance costs, side by side with a bare Temporal loop doing the same downstream
 * work, in ONE run on ONE dev server and ONE wallet process. Prints every figure with its target and writes
 * lab/bench/results/latest.json and latest.md (latest-quick.* with --quick, *-partial.* with --only, so a partial run
 * never replaces the figures of a complete one). A missed target is a finding, not a
 * failure: the exit code is non-zero only when the benchmark itself could not run. `npm test` never runs it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLUSTER_SECTIONS, parseBenchArgs, SECTIONS, type Section } from './args';
import { startBenchStack } from './lib/stack';
import { attributionTable, detailTables, figureRows, markdownTable, type AllFigures } from './report';
import type { BenchContext } from './sections/common';
import { measureConsole } from './sections/console';
import { measureHistoryCost } from './sections/history-cost';
import { measureLatency } from './sections/latency';
import { measureMemory } from './sections/memory';
import { measureProfile, type ProfileFigures } from './sections/profile';
import { measureReplay } from './sections/replay';
import { measureRetries } from './sections/retries';
import { measureThroughput, type ThroughputFigures } from './sections/throughput';
import { measureLocalModel } from './sections/local-model';
import { measureAttribution } from './sections/attribution';
import { measureQuotaCeiling } from './sections/quota-ceiling';
import { provenance, provenanceLine } from './lib/provenance';
import type { History } from './lib/history';
import { installRuntimeLogger } from '../../src/observability/logger';

async function main(): Promise<void> {
  const started = Date.now();
  const args = parseBenchArgs(process.argv.slice(2));
  // What code these figures are of, read before anything runs (a file edited during the run does not count).
  const source = provenance();
  installRuntimeLogger({ component: 'bench', level: 'ERROR', format: 'text' });
  const log = (line: string): void => {
    process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  };
  const loadAtStart = os.loadavg();
  log(
    `mode ${args.quick ? 'quick' : 'full'}; sections ${[...args.only].join(', ')}; ${os.cpus().length} cpu(s); load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const stack = await startBenchStack({ dbOnDisk: args.dbOnDisk, target: args.target });
  // Ctrl-C or a kill: stop the dev server and the wallet (workers exit when this process goes away).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the stack`);
      void stack.stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  log(
    `stack up in ${stack.dir}: ${stack.server.label} ${stack.server.address} (${stack.setupMs.server} ms), wallet ${stack.wallet.url}, bundle ${stack.setupMs.bundle} ms`,
  );
  const ctx: BenchContext = { stack, quick: args.quick, stamp: Date.now().toString(36), log };
  const figures: AllFigures = {};
  let profile: ProfileFigures | undefined;
  const sectionSeconds: Record<string, number> = {};
  const timed = async <T>(name: Section, f: () => Promise<T>): Promise<T | undefined> => {
    if (!args.only.has(name)) return undefined;
    const t0 = Date.now();
    try {
      return await f();
    } finally {
      sectionSeconds[name] = Math.round((Date.now() - t0) / 100) / 10;
    }
  };
  let longHistory: History | undefined;
  try {
    figures.latency = await timed('latency', () => measureLatency(ctx));
    const passes = await timed('throughput', async () => {
      const out: ThroughputFigures[] = [];
      for (const hosts of args.hosts) out.push(await measureThroughput(ctx, { hosts }));
      return out;
    });
    if (passes) {
      figures.throughput = passes[0];
      if (passes.length > 1) figures.throughputByHosts = passes;
    }
    figures.quotaCeiling = await timed('quota', () => measureQuotaCeiling(ctx));
    figures.history = await timed('history', () => measureHistoryCost(ctx));
    figures.replay = await timed('replay', async () => {
      // Turn shape from the history figures when measured, else a conservative guess (sizes are re-measured).
      const shape = figures.history
        ? {
            governed: {
              eventsPerTurn: figures.history.governed.eventsPerTurn,
              fixedEvents: figures.history.governed.fixedEvents,
            },
            bare: { eventsPerTurn: figures.history.bare.eventsPerTurn, fixedEvents: figures.history.bare.fixedEvents },
          }
        : { governed: { eventsPerTurn: 20, fixedEvents: 20 }, bare: { eventsPerTurn: 11, fixedEvents: 10 } };
      const r = await measureReplay(ctx, shape);
      longHistory = r.longest;
      return r.figures;
    });
    figures.memory = await timed('memory', () => measureMemory(ctx, { longRun: args.longRun }));
    figures.retries = await timed('retries', () => measureRetries(ctx));
    figures.attribution = await timed('attribution', () => measureAttribution(ctx));
    profile = await timed('profile', () => measureProfile(ctx, longHistory));
    figures.model = await timed('model', () => measureLocalModel(ctx));
    figures.console = await timed('console', () => measureConsole(ctx));
  } finally {
    await stack.stop();
  }
  const totalSeconds = (Date.now() - started) / 1000;
  const rows = figureRows(figures, totalSeconds, args.quick);
  const table = markdownTable(rows);
  process.stdout.write(`\n${table}\n\n`);
  if (figures.attribution) process.stdout.write(`${attributionTable(figures.attribution).join('\n')}\n`);
  const out = {
    mode: args.quick ? 'quick' : 'full',
    target: args.target,
    server: stack.server.label,
    at: new Date().toISOString(),
    totalSeconds: Math.round(totalSeconds),
    sectionSeconds,
    source,
    machine: machine(),
    loadAverage: { atStart: loadAtStart, atEnd: os.loadavg() },
    tmpRoot: path.dirname(stack.dir),
    setupMs: stack.setupMs,
    rows,
    figures,
    ...(profile ? { profile } : {}),
  };
  const dir = path.join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  // A partial run (--only) never overwrites the figures of a complete one.
  const partial = (args.target === 'cluster' ? CLUSTER_SECTIONS : SECTIONS).some((section) => !args.only.has(section));
  const base = path.join(
    dir,
    `latest${args.target === 'cluster' ? '-cluster' : ''}${args.quick ? '-quick' : ''}${partial ? '-partial' : ''}`,
  );
  writeFileSync(`${base}.json`, `${JSON.stringify(out, null, 2)}\n`);
  const m = out.machine;
  writeFileSync(
    `${base}.md`,
    `# Benchmark figures (${out.mode}, ${stack.server.label}, ${out.at}, ${out.totalSeconds} s, load average at start ${loadAtStart.map((l) => l.toFixed(1)).join(' ')})\n\n` +
      `${provenanceLine(source)}\n\n` +
      `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memGiB} GiB, Node ${m.node}, ${m.platform}; load average at the end ` +
      `${out.loadAverage.atEnd.map((l) => l.toFixed(1)).join(' ')}.\n\n${table}\n\n${detailTables(figures, profile)}\n`,
  );
  log(`done in ${totalSeconds.toFixed(1)} s; wrote ${path.relative(process.cwd(), base)}.json and .md`);
}

function machine(): { cpus: number; cpuModel?: string; memGiB: number; node: string; platform: string } {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
