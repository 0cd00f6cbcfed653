/**
 * The coverage table counts what ran (issue #39): fired faults from the explorer's reports, never regenerated
 * plans. A planned fault that did not fire is not counted as fired; a report that cannot say is refused.
 */
import {
  checkReport,
  commandOf,
  coverageOf,
  CoverageInputError,
  ranSentence,
  renderCoverage,
  renderPhases,
  withGenerated,
} from '../../lab/faults/explore-coverage';
import { EXPLORE_REPORT_FORMAT, type ExploredCase, type ExploreReport } from '../../lab/faults/explore-report';

const drop = { at: 'downstream.after_commit', do: 'drop_response', occurrence: 1, service: 'wallet' } as const;
const kill = { at: 'tool.after_response', do: 'kill', occurrence: 1 } as const;
const lapse = { at: 'approval.expiry', do: 'delay', occurrence: 2, ms: 5_000 } as const;

const explored = (over: Partial<ExploredCase>): ExploredCase => ({
  index: 0,
  name: 'a case',
  scenario: 'wallet-debit',
  strategy: 'same_key_replay',
  faults: [drop],
  firedEach: [true],
  violations: [],
  metrics: {},
  durationMs: 10_000,
  phasesMs: { start: 2_000, run: 7_000, 'evidence.rebuild': 1_000 },
  ...over,
});

const report = (cases: ExploredCase[], over: Partial<ExploreReport> = {}): ExploreReport => ({
  format: EXPLORE_REPORT_FORMAT,
  seed: 1,
  runsRequested: cases.length,
  casesRun: cases.length,
  casesSkipped: 0,
  planFingerprint: 'f',
  durationMs: 120_000,
  passed: true,
  faultsPlanned: cases.reduce((n, c) => n + c.faults.length, 0),
  faultsFired: cases.reduce((n, c) => n + (c.firedEach?.filter(Boolean).length ?? 0), 0),
  cases,
  ...over,
});

const row = (table: string, label: string): string[] => {
  const line = table.split('\n').find((l) => l.startsWith(`| ${label} |`));
  if (line === undefined) throw new Error(`no row ${label}`);
  return line
    .split('|')
    .slice(2, -1)
    .map((c) => c.trim());
};
const column = (table: string, scenario: string): number =>
  table
    .split('\n')[0]!
    .split('|')
    .slice(2, -1)
    .map((c) => c.trim())
    .indexOf(`\`${scenario}\``);

describe('the coverage table, from reports', () => {
  test('counts the faults that fired, from each case’s fired flags', () => {
    const cov = coverageOf([report([explored({}), explored({ index: 1 })])]);
    const table = renderCoverage(cov);
    const cells = row(table, '`downstream.after_commit` `drop_response`');
    expect(cells[column(table, 'wallet-debit')]).toBe('2');
    expect(cells.at(-1)).toBe('2');
    expect(cov).toMatchObject({ planned: 2, fired: 2, casesRun: 2 });
  });

  test('positive control: a planned fault that did not fire is not counted as fired', () => {
    const cov = coverageOf([
      report([
        explored({ faults: [drop, kill], firedEach: [true, false] }),
        explored({ index: 1, faults: [kill], firedEach: [false] }),
      ]),
    ]);
    const table = renderCoverage(cov);
    expect(row(table, '`tool.after_response` `kill`')[column(table, 'wallet-debit')]).toBe('0/2');
    expect(row(table, '`downstream.after_commit` `drop_response`')[column(table, 'wallet-debit')]).toBe('1');
    expect(cov).toMatchObject({ planned: 3, fired: 1 });
  });

  test('a case whose runner failed counts its faults as planned, none as fired', () => {
    const cov = coverageOf([report([explored({ error: 'a worker did not start', firedEach: undefined })])]);
    expect(cov).toMatchObject({ planned: 1, fired: 0, errors: 1 });
    expect(row(renderCoverage(cov), '`downstream.after_commit` `drop_response`').at(-1)).toBe('0/1');
  });

  test('an approval that lapses counts in its path: renewed or denied, as the case’s approver did', () => {
    const table = renderCoverage(
      coverageOf([
        report([
          explored({ faults: [lapse], firedEach: [true], approver: { decision: 'approve', renew: true } }),
          explored({ index: 1, faults: [lapse], firedEach: [true], approver: { decision: 'approve', renew: false } }),
          explored({ index: 2, faults: [lapse], firedEach: [false], approver: { decision: 'approve', renew: false } }),
        ]),
      ]),
    );
    const at = column(table, 'wallet-debit');
    expect(row(table, '`approval.expiry` `delay`')[at]).toBe('2/3');
    expect(row(table, '`approval.expiry` `delay`: lapsed, then renewed')[at]).toBe('1');
    expect(row(table, '`approval.expiry` `delay`: lapsed, then denied')[at]).toBe('1/2');
  });

  test('every catalogue cell has a row; where the generator cannot plan it, a letter and its reason', () => {
    const table = renderCoverage(coverageOf([report([explored({})])]));
    const comp = row(table, '`compensation.before_send` `pause`');
    const where = comp[column(table, 'wallet-debit')]!;
    expect(where).toMatch(/^·[a-z]$/);
    expect(table).toContain(`\`${where}\` no saga runs`);
    // reachable there, nothing planned in these cases: 0, not a dot
    expect(comp[column(table, 'debit-then-silence')]).toBe('0');
  });

  test('a report without fired flags is refused, not guessed at', () => {
    const old = report([explored({ firedEach: undefined })]);
    expect(() => checkReport(old, 'old.json')).toThrow(CoverageInputError);
    expect(() => checkReport({ format: 'other' }, 'x.json')).toThrow(/not an explorer report/);
    expect(checkReport(JSON.parse(JSON.stringify(report([explored({})]))), 'ok.json').cases).toHaveLength(1);
  });

  test('what ran is stated from the report: command, cases, wall time, load, faults', () => {
    const r = report([explored({}), explored({ index: 1, firedEach: [false] })], {
      runsRequested: 500,
      casesSkipped: 498,
      options: { runs: 500, minutes: 30, parallel: 3, shrinkAttempts: 0 },
      host: { cpus: 2, loadAvgStart: [1, 2, 3], loadAvgEnd: [4, 5, 6], nice: 10 },
    });
    expect(commandOf(r)).toBe(
      'npx ledgerloop faults --explore --seed 1 --runs 500 --minutes 30 --parallel 3 --shrink-attempts 0 --report <file>',
    );
    const s = ranSentence(r);
    expect(s).toContain('2 of 500 cases run (498 not started: time budget) in 2.0 min');
    expect(s).toContain(
      'on 2 cores at nice 10, load average 1.00 2.00 3.00 at the start and 4.00 5.00 6.00 at the end',
    );
    expect(s).toContain('1 of 2 planned faults fired (50.0 %)');
  });

  test('where the time went: per phase, summed over the cases and per case', () => {
    const text = renderPhases([report([explored({}), explored({ index: 1 })])]);
    expect(text).toContain('| `run` | 14 | 7.00 | 70 % |');
    expect(text).toContain('| a case, in all | 20 | 10.00 | 100 % |');
  });

  test('the doc block is replaced between its markers, and a file without them is refused', () => {
    const doc = 'before\n<!-- explore-coverage:begin -->\nold\n<!-- explore-coverage:end -->\nafter\n';
    expect(withGenerated(doc, 'new', 'd.md')).toBe(
      'before\n<!-- explore-coverage:begin -->\n\nnew\n\n<!-- explore-coverage:end -->\nafter\n',
    );
    expect(() => withGenerated('no markers', 'new', 'd.md')).toThrow(CoverageInputError);
  });
});
