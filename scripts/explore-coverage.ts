/**
 * The explorer's coverage as docs/fault-protocol.md shows it, from what ran: `node -r ./bin/register.cjs
 * scripts/explore-coverage.ts <report.json>...` reads the JSON reports of explorations (`ledgerloop faults
 * --explore ... --report <file>`) and prints, in Markdown, what each report ran (its command, cases, wall time,
 * load, faults planned and fired), the coverage table (fired faults per point × kind and scenario, with the
 * generator's reason where a cell cannot be planned) and where the cases' time went. Nothing is regenerated: a
 * fault counts as fired only where its report says it fired. Exit 2 on a missing or unreadable report.
 */
import { readFileSync } from 'node:fs';
import {
  checkReport,
  coverageOf,
  CoverageInputError,
  ranSentence,
  renderCoverage,
  renderPhases,
} from '../lab/faults/explore-coverage';

function main(files: readonly string[]): number {
  if (files.length === 0) {
    process.stderr.write('usage: scripts/explore-coverage.ts <explore-report.json>...\n');
    return 2;
  }
  try {
    const reports = files.map((f) => checkReport(JSON.parse(readFileSync(f, 'utf8')) as unknown, f));
    const out = [
      ...reports.map((r) => `Ran: ${ranSentence(r)}`),
      '',
      renderCoverage(coverageOf(reports)),
      '',
      renderPhases(reports),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } catch (err) {
    if (err instanceof CoverageInputError || err instanceof SyntaxError || (err as NodeJS.ErrnoException).code) {
      process.stderr.write(`explore-coverage: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
