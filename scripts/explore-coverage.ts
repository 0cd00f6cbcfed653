/**
 * The explorer's coverage as docs/fault-protocol.md shows it, from what ran: `node -r ./bin/register.cjs
 * scripts/explore-coverage.ts <report.json>...` reads the JSON reports of explorations (`ledgerloop faults
 * --explore ... --report <file>`) and prints, in Markdown, what each report ran (its command, cases, wall time,
 * load, faults planned and fired), the coverage table (fired faults per point × kind and scenario, with the
 * generator's reason where a cell cannot be planned) and where the cases' time went. Nothing is regenerated: a
 * fault counts as fired only where its report says it fired. With `--doc <file.md>` it writes that text between
 * the file's `<!-- explore-coverage:begin -->` and `<!-- explore-coverage:end -->` markers instead (what
 * docs/fault-protocol.md shows). Exit 2 on a missing or unreadable report, or a file without the markers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import prettier from 'prettier';
import {
  checkReport,
  coverageOf,
  CoverageInputError,
  ranSentence,
  renderCoverage,
  renderPhases,
  withGenerated,
} from '../lab/faults/explore-coverage';

async function main(argv: readonly string[]): Promise<number> {
  const at = argv.indexOf('--doc');
  const docFile = at >= 0 ? argv[at + 1] : undefined;
  const files = at >= 0 ? argv.filter((_, i) => i !== at && i !== at + 1) : argv;
  if (files.length === 0 || (at >= 0 && docFile === undefined)) {
    process.stderr.write('usage: scripts/explore-coverage.ts [--doc <file.md>] <explore-report.json>...\n');
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
    if (docFile !== undefined) {
      // formatted as `npm run format` would (the table's columns aligned): the file stays prettier-clean
      const doc = withGenerated(readFileSync(docFile, 'utf8'), out.join('\n'), docFile);
      const options = (await prettier.resolveConfig(docFile)) ?? {};
      writeFileSync(docFile, await prettier.format(doc, { ...options, filepath: docFile }));
      process.stderr.write(`explore-coverage: wrote ${docFile}\n`);
    } else {
      process.stdout.write(`${out.join('\n')}\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof CoverageInputError || err instanceof SyntaxError || (err as NodeJS.ErrnoException).code) {
      process.stderr.write(`explore-coverage: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
