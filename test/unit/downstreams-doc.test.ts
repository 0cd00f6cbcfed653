/**
 * docs/downstreams.md's recovery table names, in each row, the test that backs it (`path` › "title"). Every row
 * must name one, and every named test must exist under exactly that title, so a row cannot outlive its test.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The rows of the table whose header starts with `| contract × transport`, each as its backing test. */
function backedRows(markdown: string): { row: string; file?: string; title?: string }[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith('| contract × transport'));
  if (start < 0) return [];
  const rows: { row: string; file?: string; title?: string }[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const m = /`(test\/[^`]+\.test\.ts)` › "([^"]+)"/.exec(line);
    rows.push({ row: line.split('|')[1]!.trim(), ...(m ? { file: m[1], title: m[2] } : {}) });
  }
  return rows;
}

/** Why a row is not backed, or undefined. */
function unbacked(r: { row: string; file?: string; title?: string }): string | undefined {
  if (r.file === undefined || r.title === undefined) return `${r.row}: names no test`;
  const file = path.join(ROOT, r.file);
  if (!existsSync(file)) return `${r.row}: ${r.file} does not exist`;
  const source = readFileSync(file, 'utf8');
  if (!source.includes(`test('${r.title}'`)) return `${r.row}: no test "${r.title}" in ${r.file}`;
  return undefined;
}

test('every row of the recovery table in docs/downstreams.md names a test that exists under that title', () => {
  const rows = backedRows(readFileSync(path.join(ROOT, 'docs', 'downstreams.md'), 'utf8'));
  expect(rows.length).toBeGreaterThanOrEqual(15);
  expect(rows.map(unbacked).filter((m) => m !== undefined)).toEqual([]);
});

test('the check can fail: a row without a test, a missing file and a renamed title are each reported', () => {
  const doc = [
    '| contract × transport | does | backed by |',
    '|---|---|---|',
    '| a | x | none |',
    '| b | x | `test/unit/nowhere.test.ts` › "t" |',
    '| c | x | `test/unit/downstreams-doc.test.ts` › "a title no test has" |',
    '| d | x | `test/unit/downstreams-doc.test.ts` › "the check can fail: a row without a test, a missing file and a renamed title are each reported" |',
  ].join('\n');
  expect(backedRows(doc).map(unbacked)).toEqual([
    'a: names no test',
    'b: test/unit/nowhere.test.ts does not exist',
    'c: no test "a title no test has" in test/unit/downstreams-doc.test.ts',
    undefined,
  ]);
});
