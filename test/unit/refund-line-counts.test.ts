/**
 * docs/design-ai-sdk.md sets the refund agent's four forms side by side with the code lines of each folder of
 * examples/refund-ai-sdk/src/. The figures are counted here from the files, so the table cannot drift from them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'examples', 'refund-ai-sdk', 'src');

/** A line that is blank or holds only a comment (`//`, `/*`, or a block comment's `*`) is not code. */
function codeLines(text: string): number {
  return text.split('\n').filter((l) => !/^\s*($|\/\/|\*|\/\*)/.test(l)).length;
}

function folderLines(folder: string): number {
  const dir = path.join(SRC, folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .reduce((n, f) => n + codeLines(readFileSync(path.join(dir, f), 'utf8')), 0);
}

/** The table's rows: folder name to the figure the doc gives. */
function documented(): Map<string, number> {
  const doc = readFileSync(path.join(ROOT, 'docs', 'design-ai-sdk.md'), 'utf8');
  const rows = new Map<string, number>();
  for (const m of doc.matchAll(/^\| `([a-z-]+)\/`\s*\|[^|]*\|\s*(\d+)\s*\|/gm)) rows.set(m[1]!, Number(m[2]));
  return rows;
}

test('the doc gives the code lines of each of the four refund agents, as counted from the files', () => {
  const rows = documented();
  expect([...rows.keys()].sort()).toEqual(['agents', 'agents-governed', 'baseline', 'governed']);
  for (const [folder, figure] of rows)
    expect({ folder, lines: folderLines(folder) }).toEqual({ folder, lines: figure });
});

test('control: the count skips blank and comment-only lines and counts every other line', () => {
  expect(codeLines('/**\n * a\n */\nconst a = 1;\n\n  // b\nfoo(); // c\n')).toBe(2);
});
