/**
 * The explorer's coverage as docs/fault-protocol.md shows it: for the first N cases of a seed, how many planned
 * faults of each kind (at each point) each scenario got. `npx tsx scripts/explore-coverage.ts [seed] [runs]`
 * prints the Markdown table; a cell with `·` is a fault the generator never plans there (it cannot fire).
 */
import { contractOf } from '../lab/faults/explore';
import { generateCases, SCENARIO_ROTATION } from '../lab/faults/explore-generate';
import type { GenFault } from '../lab/faults/explore-generate';

/** The row a fault counts in: its point and kind, and for a rate limit its scope. */
export function coverageRow(f: GenFault): string {
  return `\`${f.at}\` \`${f.do}\`${f.per !== undefined ? ` per ${f.per}` : ''}`;
}

/** Rows (point and kind) by columns (scenario): planned faults in the first `runs` cases of `seed`. */
export function coverageTable(seed: number, runs: number): string {
  const cases = generateCases(seed, runs, contractOf);
  const counts = new Map<string, Map<string, number>>();
  const add = (row: string, scenario: string): void => {
    const r = counts.get(row) ?? new Map<string, number>();
    r.set(scenario, (r.get(scenario) ?? 0) + 1);
    counts.set(row, r);
  };
  for (const c of cases) {
    for (const f of c.faults) add(coverageRow(f), c.scenario);
    const lapse = c.faults.some((f) => f.at === 'approval.expiry');
    if (lapse) add(c.approver?.renew ? 'approval lapses, then renewed' : 'approval lapses, then denied', c.scenario);
  }
  const columns = SCENARIO_ROTATION;
  const rows = [...counts.keys()].sort();
  const header = `| Fault | ${columns.map((c) => `\`${c}\``).join(' | ')} | all |`;
  const rule = `| --- | ${columns.map(() => '---:').join(' | ')} | ---: |`;
  const body = rows.map((row) => {
    const r = counts.get(row)!;
    const total = [...r.values()].reduce((a, b) => a + b, 0);
    return `| ${row} | ${columns.map((c) => (r.get(c) ? String(r.get(c)) : '·')).join(' | ')} | ${total} |`;
  });
  const perScenario = columns.map((c) => String(cases.filter((x) => x.scenario === c).length));
  return [header, rule, ...body, `| cases | ${perScenario.join(' | ')} | ${cases.length} |`].join('\n');
}

if (require.main === module) {
  const seed = Number(process.argv[2] ?? 1);
  const runs = Number(process.argv[3] ?? 500);
  process.stdout.write(`${coverageTable(seed, runs)}\n`);
}
