/**
 * `ledgerloop faults --explore --seed S --runs N [--minutes M] [--save-failures DIR] [--report FILE]`: the seeded
 * explorer. It generates N cases from the seed (explore-generate.ts), runs each on real processes exactly as the
 * protocol runner does (case-runner.ts: worker SIGKILL/SIGSTOP, Temporal server kills, downstream faults), checks
 * the universal invariants on every run's durable records (explore-invariants.ts, through evidence.ts), shrinks
 * each failing case (explore-shrink.ts) and writes it out as a protocol file that reproduces it.
 * Exit code: 0 no violation, 1 a violation (or a case the runner could not check), 2 bad usage.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinTools } from '../../src/tools/registry';
import { runCase, type CaseResult } from './case-runner';
import {
  caseName,
  EXPLORE_RUN_DEADLINE_MS,
  explorationProtocol,
  generateCase,
  type ContractOf,
  type GenCase,
} from './explore-generate';
import type { InvariantViolation } from './explore-invariants';
import {
  EXPLORE_REPORT_FORMAT,
  firedRatio,
  progressLine,
  renderExploreSummary,
  writeExploreReport,
  type ExploreReport,
  type ExploredCase,
} from './explore-report';
import { shrink } from './explore-shrink';
import { buildBundle, openLab, type Lab } from './lab';
import { formatPlan, planProtocol, type Plan } from './plan';
import { parseProtocol, ProtocolFormatError } from './protocol-format';
import { checkFeatures, FeatureUnavailableError, quietRuntime } from './runner';
import { inLanes } from './lanes';
import { killAllWorkersNow } from './worker-pool';

export interface ExploreOptions {
  readonly seed: number;
  readonly runs: number;
  /** Run only this case of the seed's sequence (1-based), e.g. to reproduce or shrink one case. */
  readonly only?: number;
  /** Wall-clock budget: no case or shrink run starts unless its worst case fits. Default: none. */
  readonly minutes?: number;
  readonly saveFailures?: string;
  readonly reportFile?: string;
  /** Real runs spent shrinking each failing case, at most. */
  readonly shrinkAttempts?: number;
  readonly dataDir?: string;
  /** Print every case's timeline (processes, signals, held requests), not only a violating case's. */
  readonly verbose?: boolean;
  /** Fail (exit 1) unless at least this share of the planned faults fired. Default: no floor. */
  readonly minFired?: number;
  /**
   * Cases run side by side (each on processes, a task queue and databases of its own). Default
   * DEFAULT_PARALLEL: a case spends most of its wall time waiting on timeouts and holds its faults set.
   */
  readonly parallel?: number;
  readonly say?: (line: string) => void;
  readonly print?: (text: string) => void;
}

/**
 * The worst case of one run: its deadline, the runner's 20 s grace, then 30 s for the processes around it (on a
 * loaded 2-core machine a worker process took up to 24 s to start, and evidence about 6 s). Measured: 75 s.
 */
export const CASE_WORST_MS = EXPLORE_RUN_DEADLINE_MS + 20_000 + 30_000;
export const DEFAULT_SHRINK_ATTEMPTS = 6;
/** Cases side by side by default: CI's machine has 2 cores, and one case keeps about half of one busy. */
export const DEFAULT_PARALLEL = 3;

/** The tool contracts the generator reads (a tool it does not know is treated as having no contract). */
export const contractOf: ContractOf = (name) => builtinTools.get(name)?.idempotency ?? 'none';

/** Validates the generated cases as a protocol file would be, and plans them. */
export function planExploration(seed: number, cases: readonly GenCase[]): Plan {
  return planProtocol(parseProtocol(explorationProtocol(seed, cases), `exploration of seed ${seed}`));
}

function explored(index: number, c: GenCase, r: CaseResult): ExploredCase {
  return {
    index,
    name: c.name,
    scenario: c.scenario,
    strategy: c.strategy,
    faults: c.faults,
    ...(c.approver ? { approver: { decision: c.approver.decision, renew: c.approver.renew } } : {}),
    violations: r.invariants ?? [],
    ...(r.error !== undefined ? { error: r.error } : {}),
    metrics: r.metrics,
    ...(r.workflowId !== undefined ? { workflowId: r.workflowId } : {}),
    durationMs: r.durationMs,
    ...(r.faultsFired !== undefined ? { faultsFired: r.faultsFired } : {}),
    ...(r.missedFaults && r.missedFaults.length > 0 ? { missedFaults: r.missedFaults } : {}),
    ...(r.firedEach ? { firedEach: r.firedEach } : {}),
    ...(r.phasesMs ? { phasesMs: r.phasesMs } : {}),
  };
}

/** Runs one case of its own plan in a directory of its own (shrink runs reuse no database). */
async function runSingle(lab: Lab, seed: number, c: GenCase, dir: string, say: (m: string) => void) {
  const plan = planExploration(seed, [c]);
  return runCase({ ...lab, dataDir: dir }, plan, plan.cases[0]!, say);
}

/** The protocol file that reproduces a failing case (validated before it is written). */
export function failureProtocol(
  seed: number,
  c: GenCase,
  violations: readonly InvariantViolation[],
  original?: GenCase,
) {
  const why = violations.map((v) => `${v.invariant}: ${v.message}`).join(' | ');
  const from = original && original.name !== c.name ? ` Shrunk from "${original.name}".` : '';
  const theCase: GenCase = { ...c, description: `${c.description}. Found violating: ${why}`.slice(0, 4_000) };
  const p = explorationProtocol(
    seed,
    [theCase],
    `Found by \`ledgerloop faults --explore --seed ${seed}\`: a generated case whose durable records violate a universal invariant.${from} Run it with \`npx ledgerloop faults <this file>\`; it fails until the defect is fixed.`,
  );
  parseProtocol(p, 'failure protocol');
  return p;
}

/**
 * CPU time of this process and of its children that have exited (workers, services, dev servers), in ms: on
 * Linux from /proc (clock ticks, 100 per second), elsewhere this process only.
 */
function cpuMs(): { self: number; children: number } {
  const u = process.cpuUsage();
  const self = Math.round((u.user + u.system) / 1000);
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return { self, children: (Number(fields[13]) + Number(fields[14])) * 10 };
  } catch {
    return { self, children: 0 };
  }
}

/** Runs an exploration end to end and returns its report. */
export async function runExplore(opts: ExploreOptions): Promise<ExploreReport> {
  const say = opts.say ?? ((m: string) => process.stderr.write(`${m}\n`));
  const print = opts.print ?? ((t: string) => process.stdout.write(`${t}\n`));
  const started = Date.now();
  const loadAvgStart = os.loadavg();
  const budgetEnd = opts.minutes !== undefined ? started + opts.minutes * 60_000 : Number.POSITIVE_INFINITY;
  const fits = (): boolean => Date.now() + CASE_WORST_MS <= budgetEnd;
  // indices[k]: the position in the seed's sequence of the k-th case run (the plan numbers them 0..n-1)
  const indices = opts.only !== undefined ? [opts.only - 1] : Array.from({ length: opts.runs }, (_, i) => i);
  const cases = indices.map((i) => generateCase(opts.seed, i, contractOf));
  const plan = planExploration(opts.seed, cases);
  print(formatPlan(plan));
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-explore-'));
  say(`explore seed ${opts.seed}: ${plan.cases.length} case(s), building the workflow bundle (data in ${dataDir})`);
  const bundle = await buildBundle(dataDir);
  checkFeatures(plan, bundle);
  quietRuntime();
  const lab = await openLab(dataDir, bundle);
  const parallel = opts.parallel ?? DEFAULT_PARALLEL;
  const slots: (ExploredCase | undefined)[] = [];
  let results: ExploredCase[] = [];
  let shrinkMs = 0;
  try {
    // Cases start in their order, `parallel` at a time, none unless its worst case fits: those run are always the
    // first n of the sequence, whatever finished first.
    let finished = 0;
    await inLanes(
      plan.cases,
      parallel,
      async (pc) => {
        const c = cases[pc.index]!;
        const lines: string[] = [];
        const r = await runCase(lab, plan, pc, (m) => lines.push(m));
        const e = explored(indices[pc.index]!, c, r);
        slots[pc.index] = e;
        finished += 1;
        const violating = slots.filter((x) => x && (x.violations.length > 0 || x.error)).length;
        say(progressLine(opts.seed, finished, plan.cases.length, e, violating));
        if (opts.verbose || e.violations.length > 0 || e.error) for (const l of lines) say(`    ${l}`);
      },
      fits,
    );
    results = slots.filter((x): x is ExploredCase => x !== undefined);
    // Shrink after every case has run, so a failure early on does not starve the rest of the budget; failing cases
    // side by side (each one's candidates one after the other: a greedy search).
    const shrinkStarted = Date.now();
    const failing = [...results.entries()].filter(([, e]) => e.violations.length > 0);
    await inLanes(failing, parallel, async ([k, e]) => {
      const original = cases[indices.indexOf(e.index)]!;
      const wanted = new Set(e.violations.map((v) => v.invariant));
      const maxAttempts = opts.shrinkAttempts ?? DEFAULT_SHRINK_ATTEMPTS;
      const s = await shrink<readonly InvariantViolation[]>(
        original,
        e.violations,
        async (candidate, n) => {
          const named = { ...candidate, name: caseName(opts.seed, e.index, candidate, ` shrink ${n}`) };
          const r = await runSingle(lab, opts.seed, named, path.join(dataDir, `shrink-${e.index + 1}-${n}`), () => {});
          const found = (r.invariants ?? []).filter((v) => wanted.has(v.invariant));
          say(
            `explore seed ${opts.seed}: shrinking case ${e.index + 1}, run ${n}: ${named.faults.length} fault(s) -> ${found.length > 0 ? 'still fails' : 'holds'}`,
          );
          return found.length > 0 ? found : undefined;
        },
        (n) => n < maxAttempts && fits(),
      );
      const smallest: GenCase = {
        ...s.smallest,
        name: caseName(opts.seed, e.index, s.smallest, s.smallest === original ? '' : ' shrunk'),
      };
      let savedTo: string | undefined;
      if (opts.saveFailures) {
        mkdirSync(opts.saveFailures, { recursive: true });
        savedTo = path.join(opts.saveFailures, `explore-seed${opts.seed}-case${e.index + 1}.json`);
        writeFileSync(
          savedTo,
          `${JSON.stringify(failureProtocol(opts.seed, smallest, s.violations, original), null, 2)}\n`,
        );
      }
      results[k] = {
        ...e,
        ...(s.smallest !== original || s.attempts > 0
          ? {
              shrunk: {
                name: smallest.name,
                faults: smallest.faults,
                violations: s.violations,
                attempts: s.attempts,
                steps: s.steps,
                minimal: s.smallest === original,
              },
            }
          : {}),
        ...(savedTo ? { savedTo } : {}),
      };
    });
    shrinkMs = Date.now() - shrinkStarted;
  } finally {
    await lab.stop();
  }
  const bad = results.some((c) => c.violations.length > 0 || c.error);
  const fired = firedRatio(results);
  const tooFewFired = opts.minFired !== undefined && fired.ratio < opts.minFired;
  const report: ExploreReport = {
    format: EXPLORE_REPORT_FORMAT,
    seed: opts.seed,
    startedAt: new Date(started).toISOString(),
    options: {
      runs: opts.runs,
      ...(opts.only !== undefined ? { only: opts.only } : {}),
      ...(opts.minutes !== undefined ? { minutes: opts.minutes } : {}),
      parallel,
      shrinkAttempts: opts.shrinkAttempts ?? DEFAULT_SHRINK_ATTEMPTS,
      ...(opts.minFired !== undefined ? { minFired: opts.minFired } : {}),
    },
    host: {
      cpus: os.cpus().length,
      loadAvgStart,
      loadAvgEnd: os.loadavg(),
      nice: os.getPriority(),
      cpuMs: cpuMs(),
    },
    runsRequested: plan.cases.length,
    casesRun: results.length,
    casesSkipped: plan.cases.length - results.length,
    planFingerprint: plan.fingerprint,
    durationMs: Date.now() - started,
    shrinkMs,
    // Fail closed: a budget too small for a single case has checked nothing.
    passed: results.length > 0 && !bad && !tooFewFired,
    faultsPlanned: fired.planned,
    faultsFired: fired.fired,
    cases: results,
  };
  if (opts.reportFile) writeExploreReport(opts.reportFile, report);
  if (opts.dataDir === undefined && !bad) rmSync(dataDir, { recursive: true, force: true });
  else say(`explore: databases and logs kept in ${dataDir}`);
  print(`\n${renderExploreSummary(report)}`);
  if (tooFewFired)
    print(
      `explore: only ${(100 * fired.ratio).toFixed(1)}% of the planned faults fired, below --min-fired ${opts.minFired}: the run proves less than it planned`,
    );
  return report;
}

/** The options as the CLI receives them (strings), before validation. */
export interface RawExploreFlags {
  readonly explore?: boolean;
  readonly seed?: string;
  readonly runs?: string;
  readonly minutes?: string;
  readonly saveFailures?: string;
  readonly report?: string;
  readonly shrinkAttempts?: string;
  readonly verbose?: boolean;
  readonly case?: string;
  readonly minFired?: string;
  readonly parallel?: string;
}

export class ExploreUsageError extends Error {
  override readonly name = 'Explore.BadUsage';
}

function wholeNumber(flag: string, text: string | undefined, min: number, max: number): number {
  const n = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new ExploreUsageError(
      `${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text ?? '')}`,
    );
  }
  return n;
}

/** Validates the explorer's flags; throws ExploreUsageError naming the bad one. */
export function parseExploreFlags(protocolFile: string | undefined, o: RawExploreFlags): ExploreOptions {
  if (protocolFile !== undefined)
    throw new ExploreUsageError('--explore generates its own cases: give it no protocol file');
  if (o.seed === undefined) throw new ExploreUsageError('--explore needs --seed S (0 to 4294967295)');
  const seed = wholeNumber('--seed', o.seed, 0, 0xffff_ffff);
  const runs = wholeNumber('--runs', o.runs ?? '20', 1, 10_000);
  const only = o.case !== undefined ? wholeNumber('--case', o.case, 1, 10_000) : undefined;
  let minutes: number | undefined;
  if (o.minutes !== undefined) {
    minutes = Number(o.minutes);
    if (o.minutes.trim() === '' || !Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
      throw new ExploreUsageError(`--minutes must be a positive number of minutes, got ${JSON.stringify(o.minutes)}`);
  }
  const shrinkAttempts =
    o.shrinkAttempts !== undefined ? wholeNumber('--shrink-attempts', o.shrinkAttempts, 0, 100) : undefined;
  let minFired: number | undefined;
  if (o.minFired !== undefined) {
    minFired = Number(o.minFired);
    if (o.minFired.trim() === '' || !Number.isFinite(minFired) || minFired < 0 || minFired > 1)
      throw new ExploreUsageError(`--min-fired must be a share from 0 to 1, got ${JSON.stringify(o.minFired)}`);
  }
  const parallel = o.parallel !== undefined ? wholeNumber('--parallel', o.parallel, 1, 16) : undefined;
  return {
    seed,
    runs,
    ...(parallel !== undefined ? { parallel } : {}),
    ...(minutes !== undefined ? { minutes } : {}),
    ...(o.saveFailures !== undefined ? { saveFailures: o.saveFailures } : {}),
    ...(o.report !== undefined ? { reportFile: o.report } : {}),
    ...(shrinkAttempts !== undefined ? { shrinkAttempts } : {}),
    ...(o.verbose ? { verbose: true } : {}),
    ...(only !== undefined ? { only } : {}),
    ...(minFired !== undefined ? { minFired } : {}),
  };
}

/** The CLI entry of `faults --explore`: returns the exit code. */
export async function runExploreCommand(protocolFile: string | undefined, flags: RawExploreFlags): Promise<number> {
  let opts: ExploreOptions;
  try {
    opts = parseExploreFlags(protocolFile, flags);
  } catch (err) {
    if (!(err instanceof ExploreUsageError)) throw err;
    process.stderr.write(`ledgerloop faults --explore: ${err.message}\nNothing was run.\n`);
    return 2;
  }
  const interrupted = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\nledgerloop faults --explore: ${signal}: stopping the run's processes\n`);
    killAllWorkersNow();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const report = await runExplore(opts);
    if (opts.reportFile) process.stderr.write(`explore: report written to ${opts.reportFile}\n`);
    return report.passed ? 0 : 1;
  } catch (err) {
    if (err instanceof ProtocolFormatError || err instanceof FeatureUnavailableError) {
      process.stderr.write(`ledgerloop faults --explore: ${err.message}\nNothing was run.\n`);
      return 2;
    }
    throw err;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
}
