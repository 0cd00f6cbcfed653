/**
 * What the explorer prints and writes: one progress line per case, the summary table, the violations, and the
 * JSON report (`--report`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseMetrics } from './metrics';
import type { GenFault } from './explore-generate';
import { INVARIANTS, violatedGroups, type InvariantViolation } from './explore-invariants';

export const EXPLORE_REPORT_FORMAT = 'ledgerloop.explore-report/1';

export interface ExploredCase {
  readonly index: number;
  readonly name: string;
  readonly scenario: string;
  readonly strategy: string;
  readonly faults: readonly GenFault[];
  /** The case's scripted approver, when its calls ask for an approval (the coverage table's lapse rows). */
  readonly approver?: { readonly decision: 'approve' | 'deny'; readonly renew: boolean };
  readonly violations: readonly InvariantViolation[];
  /** The runner itself failed: the case could not be checked (counted against the run, fail closed). */
  readonly error?: string;
  readonly metrics: Partial<CaseMetrics>;
  readonly workflowId?: string;
  readonly durationMs: number;
  /** Planned faults that observably happened in the run (the runner's countFired), and those that did not. */
  readonly faultsFired?: number;
  readonly missedFaults?: readonly string[];
  /** Per planned fault (`faults`, in order): whether it observably happened. Absent when the runner failed. */
  readonly firedEach?: readonly boolean[];
  /** Wall time per phase of the case, in ms (lab/faults/phases.ts). */
  readonly phasesMs?: Readonly<Record<string, number>>;
  readonly shrunk?: {
    readonly name: string;
    readonly faults: readonly GenFault[];
    readonly violations: readonly InvariantViolation[];
    readonly attempts: number;
    readonly steps: readonly string[];
    /** No smaller candidate failed: the original is the smallest case found. */
    readonly minimal: boolean;
  };
  /** The protocol file written for it (`--save-failures`). */
  readonly savedTo?: string;
}

/** Planned faults over the cases run, and how many of them observably happened. */
export function firedRatio(cases: readonly ExploredCase[]): { planned: number; fired: number; ratio: number } {
  const counted = cases.filter((c) => !c.error);
  const planned = counted.reduce((n, c) => n + c.faults.length, 0);
  const fired = counted.reduce((n, c) => n + (c.faultsFired ?? Number(c.metrics.faults_fired ?? 0)), 0);
  return { planned, fired, ratio: planned === 0 ? 1 : fired / planned };
}

/** How the exploration was run, as the command gave it (the doc's figures name it). */
export interface ExploreRunOptions {
  readonly runs: number;
  readonly only?: number;
  readonly minutes?: number;
  /** Cases run side by side. */
  readonly parallel: number;
  readonly shrinkAttempts: number;
  readonly minFired?: number;
}

/** The machine the exploration ran on: cores, and the load average (1, 5, 15 min) at its start and its end. */
export interface ExploreHost {
  readonly cpus: number;
  readonly loadAvgStart: readonly number[];
  readonly loadAvgEnd: readonly number[];
  /** This process's scheduling priority (10 under `nice -n 10`). */
  readonly nice: number;
  /** CPU time spent, in ms: the explorer itself, and the processes it started (once they exited). */
  readonly cpuMs?: { readonly self: number; readonly children: number };
}

export interface ExploreReport {
  readonly format: typeof EXPLORE_REPORT_FORMAT;
  readonly seed: number;
  /** When it started (ISO 8601). */
  readonly startedAt?: string;
  readonly options?: ExploreRunOptions;
  readonly host?: ExploreHost;
  readonly runsRequested: number;
  readonly casesRun: number;
  /** Cases not started because the time budget (`--minutes`) would have been passed. */
  readonly casesSkipped: number;
  readonly planFingerprint: string;
  readonly durationMs: number;
  /** Of `durationMs`, the time spent shrinking failing cases (after every case had run). */
  readonly shrinkMs?: number;
  readonly passed: boolean;
  /** Planned faults of the cases run (a runner error excluded) and those that fired. */
  readonly faultsPlanned?: number;
  readonly faultsFired?: number;
  readonly cases: readonly ExploredCase[];
}

const faultList = (faults: readonly GenFault[]): string =>
  faults.map((f) => `${f.at}=${f.do}#${f.occurrence}`).join(' ') || 'no fault';

/** The line printed when a case is done. */
export function progressLine(
  seed: number,
  done: number,
  total: number,
  c: ExploredCase,
  violatingSoFar: number,
): string {
  const verdict = c.error
    ? 'ERROR'
    : c.violations.length > 0
      ? `VIOLATION (${violatedGroups(c.violations)}: ${c.violations.length})`
      : 'ok';
  const fired = `faults fired ${c.faultsFired ?? c.metrics.faults_fired ?? 0}/${c.faults.length}`;
  return `explore seed ${seed} [${done}/${total}] ${verdict} in ${(c.durationMs / 1000).toFixed(1)} s · ${fired} · ${violatingSoFar} violating so far · ${c.name}`;
}

const COLUMNS: ReadonlyArray<[string, (c: ExploredCase) => string]> = [
  ['#', (c) => String(c.index + 1)],
  ['scenario', (c) => c.scenario],
  ['strategy', (c) => c.strategy],
  ['faults', (c) => faultList(c.faults)],
  ['fired', (c) => `${c.metrics.faults_fired ?? '-'}/${c.faults.length}`],
  ['stop', (c) => String(c.metrics.stop_reason || '-')],
  ['effects', (c) => String(c.metrics.business_effect_count ?? '-')],
  ['calls', (c) => String(c.metrics.final_states || '-')],
  [
    'invariants',
    (c) => (c.error ? 'ERROR' : c.violations.length ? `VIOLATED ${violatedGroups(c.violations)}` : 'held'),
  ],
  ['time', (c) => `${(c.durationMs / 1000).toFixed(1)}s`],
];

/** One row per case, fixed width. */
export function renderExploreTable(cases: readonly ExploredCase[]): string {
  const cells = cases.map((c) => COLUMNS.map(([, f]) => f(c)));
  const widths = COLUMNS.map(([t], i) => Math.max(t.length, ...cells.map((r) => r[i]!.length)));
  const line = (v: readonly string[]): string =>
    v
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(COLUMNS.map(([t]) => t)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The table, every violation (and its shrunk case), the invariant legend and the closing line. */
export function renderExploreSummary(r: ExploreReport): string {
  const out = [renderExploreTable(r.cases), ''];
  const bad = r.cases.filter((c) => c.violations.length > 0 || c.error);
  if (bad.length > 0) out.push('Violations:');
  for (const c of bad) {
    out.push(`  case ${c.index + 1}: ${c.name}${c.workflowId ? ` (workflow ${c.workflowId})` : ''}`);
    if (c.error) out.push(`    runner error: ${c.error}`);
    for (const v of c.violations) out.push(`    [${INVARIANTS[v.invariant].group}] ${v.invariant}: ${v.message}`);
    if (c.shrunk?.minimal) {
      out.push(`    already minimal: ${c.shrunk.attempts} smaller candidate(s) run, none failed`);
    } else if (c.shrunk) {
      out.push(
        `    shrunk in ${c.shrunk.attempts} run(s) to: ${faultList(c.shrunk.faults)} (${c.shrunk.violations.map((v) => v.invariant).join(', ')})`,
      );
    }
    if (c.savedTo) out.push(`    reproduce: npx ledgerloop faults ${c.savedTo}`);
  }
  if (bad.length > 0) out.push('');
  out.push(
    'Invariants: (a) one effect per intent, no orphan effect · (b) standing effects compensated or named at a stop',
  );
  out.push('            (c) no FAILED call with an effect, no dispatch before intent, no stale or mismatched request');
  out.push('            (d) the same projection hash rebuilt, replay deterministic, closed before deadline + grace');
  const violating = r.cases.filter((c) => c.violations.length > 0).length;
  const errors = r.cases.filter((c) => c.error).length;
  const f = firedRatio(r.cases);
  const missed = new Map<string, number>();
  for (const c of r.cases)
    for (const m of c.missedFaults ?? []) {
      const kind = m.replace(/ \(.*$/, '').replace(/ on \w+.*$/, '');
      missed.set(kind, (missed.get(kind) ?? 0) + 1);
    }
  out.push(
    '',
    `faults fired: ${f.fired} of ${f.planned} planned (${(100 * f.ratio).toFixed(1)}%)${missed.size > 0 ? `; never fired: ${[...missed].map(([k, n]) => `${k} x${n}`).join(', ')}` : ''}`,
  );
  const skipped = r.casesSkipped > 0 ? `, ${r.casesSkipped} not started (time budget)` : '';
  out.push(
    '',
    `explore seed ${r.seed}: ${r.casesRun} of ${r.runsRequested} cases run${skipped}; ${violating} violated an invariant${errors ? `, ${errors} could not be checked` : ''}; ${(r.durationMs / 1000).toFixed(1)} s (plan ${r.planFingerprint})`,
  );
  return out.join('\n');
}

export function writeExploreReport(file: string, report: ExploreReport): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
