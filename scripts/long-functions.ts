/**
 * Lists the runtime's functions longer than a line limit (issue #40: no runtime function over 60 lines without a
 * written reason). test/unit/function-length.test.ts holds the reasoned allow-list and fails on a new one;
 * `node -r tsx/cjs scripts/long-functions.ts` prints the current list, longest first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The folders whose code runs in a worker, a client or a service (lab/, cli/ and test/ are tools around it). */
export const RUNTIME_FOLDERS = ['src', 'host', 'workflows', 'activities', 'services'] as const;

/** The limit the issue sets: past it a function reads as a room, not a step. */
export const MAX_LINES = 60;

export interface LongFunction {
  /** `file:name`, stable across edits that move the function within its file. */
  readonly id: string;
  readonly lines: number;
  readonly line: number;
}

/** A function's name as a reader finds it: the declaration's, the variable's or property's it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name !== undefined)
    return parent.name.getText(source);
  return `<anonymous@${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}>`;
}

/** The functions in `text` (a TypeScript file named `file`) longer than `max` lines, counted start to end. */
export function longFunctionsIn(file: string, text: string, max = MAX_LINES): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const lines = source.getLineAndCharacterOfPosition(fn.end).line - start + 1;
      if (lines > max) found.push({ id: `${file}:${nameOf(fn, source)}`, lines, line: start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : tsFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every long function under the runtime folders of `root`, longest first. */
export function longFunctions(root: string, max = MAX_LINES): LongFunction[] {
  return RUNTIME_FOLDERS.flatMap((folder) => tsFiles(path.join(root, folder)))
    .flatMap((file) => longFunctionsIn(path.relative(root, file), readFileSync(file, 'utf8'), max))
    .sort((a, b) => b.lines - a.lines || a.id.localeCompare(b.id));
}

if (require.main === module) {
  const all = longFunctions(path.join(__dirname, '..'));
  for (const f of all) console.log(`${String(f.lines).padStart(4)}  ${f.id} (line ${f.line})`);
  console.log(`${all.length} functions over ${MAX_LINES} lines`);
}
