/**
 * The explorer's coverage, as docs/fault-protocol.md shows it, counted from what RAN: the JSON reports of
 * explorations (`--report`), never from regenerated plans. Per point × kind of the catalogue (a row; a few rows
 * split by path: a rate limit per scope, an approval that lapses then is renewed or denied) and per scenario (a
 * column): the planned faults that observably fired, from each case's `firedEach`. A fault planned but not fired
 * counts as planned only. Where the generator cannot plan a cell in a scenario, the cell says why, in the
 * generator's own words (`scenarioReach`, computed). Pure; scripts/explore-coverage.ts prints it.
 */
import { contractOf } from './explore';
import { CATALOGUE_CELLS, cellKey, type Cell } from './explore-faults';
import { scenarioReach, SCENARIO_ROTATION, type GenFault } from './explore-generate';
import { EXPLORE_REPORT_FORMAT, type ExploredCase, type ExploreReport } from './explore-report';

export class CoverageInputError extends Error {
  override readonly name = 'Coverage.BadReport';
}

/** Planned and fired faults of one row in one scenario. */
interface Count {
  planned: number;
  fired: number;
}

/** The coverage of some explorations: counts per row and scenario, the cases and what ran. */
export interface Coverage {
  /** Row label -> scenario -> count. */
  readonly counts: ReadonlyMap<string, ReadonlyMap<string, Count>>;
  /** The rows in order, each with the catalogue cell it belongs to. */
  readonly rows: readonly { readonly label: string; readonly cell: Cell }[];
  readonly casesPerScenario: ReadonlyMap<string, number>;
  readonly casesRun: number;
  readonly planned: number;
  readonly fired: number;
  /** Cases whose runner failed (their faults count as planned, none as fired). */
  readonly errors: number;
}

const code = (s: string): string => `\`${s}\``;
const cellLabel = (c: Cell): string => `${code(c.at)} ${code(c.do)}`;

/** The rows of a catalogue cell: itself, or its paths. */
function rowsOf(cell: Cell): string[] {
  const key = cellKey(cell);
  if (key === 'policy.rate_limit rate_limit')
    return ['run', 'principal', 'tenant'].map((per) => `${cellLabel(cell)} per ${per}`);
  if (key === 'approval.expiry delay')
    return [cellLabel(cell), `${cellLabel(cell)}: lapsed, then renewed`, `${cellLabel(cell)}: lapsed, then denied`];
  return [cellLabel(cell)];
}

/** The rows one planned fault of a case counts in. */
function rowsFor(f: GenFault, c: ExploredCase): string[] {
  const cell = { at: f.at, do: f.do };
  if (f.do === 'rate_limit') return [`${cellLabel(cell)} per ${f.per ?? 'run'}`];
  if (f.at === 'approval.expiry') {
    const then = c.approver?.renew ? 'renewed' : 'denied';
    return [cellLabel(cell), `${cellLabel(cell)}: lapsed, then ${then}`];
  }
  return [cellLabel(cell)];
}

/** Validates a parsed report enough to count from it; throws CoverageInputError naming what is wrong. */
export function checkReport(r: unknown, source: string): ExploreReport {
  const report = r as Partial<ExploreReport>;
  if (report?.format !== EXPLORE_REPORT_FORMAT)
    throw new CoverageInputError(`${source}: not an explorer report (format ${JSON.stringify(report?.format)})`);
  for (const c of report.cases ?? []) {
    if (c.error !== undefined) continue;
    if (!Array.isArray(c.firedEach) || c.firedEach.length !== c.faults.length)
      throw new CoverageInputError(
        `${source}: case ${c.index + 1} has no fired flag per planned fault (firedEach): a report from before they were recorded cannot say which faults fired`,
      );
  }
  return report as ExploreReport;
}

/** Counts the planned and fired faults of the reports' cases, by row and scenario. */
export function coverageOf(reports: readonly ExploreReport[]): Coverage {
  const rows = CATALOGUE_CELLS.flatMap((cell) => rowsOf(cell).map((label) => ({ label, cell })));
  const counts = new Map<string, Map<string, Count>>(rows.map((r) => [r.label, new Map()]));
  const casesPerScenario = new Map<string, number>();
  let planned = 0;
  let fired = 0;
  let errors = 0;
  let casesRun = 0;
  for (const report of reports) {
    for (const c of report.cases) {
      casesRun += 1;
      if (c.error !== undefined) errors += 1;
      casesPerScenario.set(c.scenario, (casesPerScenario.get(c.scenario) ?? 0) + 1);
      c.faults.forEach((f, i) => {
        const happened = c.error === undefined && c.firedEach?.[i] === true;
        planned += 1;
        if (happened) fired += 1;
        for (const row of rowsFor(f, c)) {
          const byScenario = counts.get(row);
          if (byScenario === undefined) throw new CoverageInputError(`a fault outside the catalogue: ${row}`);
          const n = byScenario.get(c.scenario) ?? { planned: 0, fired: 0 };
          n.planned += 1;
          if (happened) n.fired += 1;
          byScenario.set(c.scenario, n);
        }
      });
    }
  }
  return { counts, rows, casesPerScenario, casesRun, planned, fired, errors };
}

/** A cell: fired, or `fired/planned` when some did not fire; `·x` where it cannot be planned (legend x). */
function cellText(n: Count | undefined, reason: string | undefined, legend: Map<string, string>): string {
  if (reason !== undefined) {
    if (!legend.has(reason)) legend.set(reason, String.fromCharCode(97 + legend.size));
    return `·${legend.get(reason)}`;
  }
  if (n === undefined) return '0';
  return n.fired === n.planned ? String(n.fired) : `${n.fired}/${n.planned}`;
}

/**
 * The Markdown table: a row per point × kind (and path), a column per scenario, fired faults in each cell
 * (`fired/planned` where some did not fire, `0` where none was planned in these cases), `·` plus a letter where
 * the generator cannot plan it, and the legend of those letters: the reasons `scenarioReach` computes.
 */
export function renderCoverage(cov: Coverage): string {
  const columns = SCENARIO_ROTATION;
  const legend = new Map<string, string>();
  const header = `| Fault | ${columns.map(code).join(' | ')} | all |`;
  const rule = `| --- | ${columns.map(() => '---:').join(' | ')} | ---: |`;
  const body = cov.rows.map(({ label, cell }) => {
    const byScenario = cov.counts.get(label)!;
    const cells = columns.map((s) => cellText(byScenario.get(s), scenarioReach(cell, s, contractOf), legend));
    const total = [...byScenario.values()].reduce(
      (a, n) => ({ planned: a.planned + n.planned, fired: a.fired + n.fired }),
      {
        planned: 0,
        fired: 0,
      },
    );
    const all =
      total.planned === 0
        ? '0'
        : total.fired === total.planned
          ? String(total.fired)
          : `${total.fired}/${total.planned}`;
    return `| ${label} | ${cells.join(' | ')} | ${all} |`;
  });
  const perScenario = columns.map((s) => String(cov.casesPerScenario.get(s) ?? 0));
  const table = [header, rule, ...body, `| cases run | ${perScenario.join(' | ')} | ${cov.casesRun} |`];
  const reasons = [...legend].map(([reason, letter]) => `\`·${letter}\` ${reason}`);
  return [
    ...table,
    '',
    `Cannot be planned there (the generator's reach check, per scenario): ${reasons.join('; ')}.`,
  ].join('\n');
}

const minutes = (ms: number): string => `${(ms / 60_000).toFixed(1)} min`;
const load = (xs: readonly number[] | undefined): string => (xs ? xs.map((x) => x.toFixed(2)).join(' ') : 'unknown');

/** The command that ran a report, as its options say. */
export function commandOf(r: ExploreReport): string {
  const o = r.options;
  if (o === undefined) return `npx ledgerloop faults --explore --seed ${r.seed} --runs ${r.runsRequested}`;
  return [
    'npx ledgerloop faults --explore',
    `--seed ${r.seed}`,
    o.only !== undefined ? `--case ${o.only}` : `--runs ${o.runs}`,
    o.minutes !== undefined ? `--minutes ${o.minutes}` : '',
    `--parallel ${o.parallel}`,
    `--shrink-attempts ${o.shrinkAttempts}`,
    o.minFired !== undefined ? `--min-fired ${o.minFired}` : '',
    '--report <file>',
  ]
    .filter((x) => x !== '')
    .join(' ');
}

/** What one report says it ran: the command, the cases, the wall time, the machine, the faults. */
export function ranSentence(r: ExploreReport): string {
  const f = { planned: r.faultsPlanned ?? 0, fired: r.faultsFired ?? 0 };
  const share = f.planned === 0 ? '' : ` (${((100 * f.fired) / f.planned).toFixed(1)} %)`;
  const violating = r.cases.filter((c) => c.violations.length > 0).length;
  const errors = r.cases.filter((c) => c.error !== undefined).length;
  const cpu = r.host?.cpuMs ? `, ${minutes(r.host.cpuMs.self + r.host.cpuMs.children)} of CPU` : '';
  const host = r.host
    ? ` on ${r.host.cpus} cores at nice ${r.host.nice}, load average ${load(r.host.loadAvgStart)} at the start and ${load(r.host.loadAvgEnd)} at the end${cpu}`
    : '';
  return (
    `\`${commandOf(r)}\`${r.startedAt ? ` (started ${r.startedAt})` : ''}: ${r.casesRun} of ${r.runsRequested} cases run` +
    `${r.casesSkipped > 0 ? ` (${r.casesSkipped} not started: time budget)` : ''} in ${minutes(r.durationMs)}${host}; ` +
    `${f.fired} of ${f.planned} planned faults fired${share}; ${violating} case(s) violated an invariant` +
    `${errors > 0 ? `, ${errors} could not be checked` : ''}.`
  );
}

/** Where the cases' wall time went: per phase, the sum over cases and the mean per case. */
export function renderPhases(reports: readonly ExploreReport[]): string {
  const totals = new Map<string, number>();
  let cases = 0;
  let wall = 0;
  for (const r of reports)
    for (const c of r.cases) {
      cases += 1;
      wall += c.durationMs;
      for (const [k, v] of Object.entries(c.phasesMs ?? {})) totals.set(k, (totals.get(k) ?? 0) + v);
    }
  if (cases === 0) return '';
  const rows = [...totals].map(
    ([k, v]) =>
      `| ${code(k)} | ${(v / 1000).toFixed(0)} | ${(v / cases / 1000).toFixed(2)} | ${((100 * v) / wall).toFixed(0)} % |`,
  );
  return [
    '| Phase | s, all cases | s per case | share of case time |',
    '| --- | ---: | ---: | ---: |',
    ...rows,
    `| a case, in all | ${(wall / 1000).toFixed(0)} | ${(wall / cases / 1000).toFixed(2)} | 100 % |`,
  ].join('\n');
}

/** The markers a Markdown file holds the generated coverage between. */
export const BEGIN = '<!-- explore-coverage:begin -->';
export const END = '<!-- explore-coverage:end -->';

/** `doc` with `text` between its markers; throws CoverageInputError when it has none. */
export function withGenerated(doc: string, text: string, source: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new CoverageInputError(`${source}: no ${BEGIN} ... ${END} markers`);
  return `${doc.slice(0, a + BEGIN.length)}\n\n${text}\n\n${doc.slice(b)}`;
}
