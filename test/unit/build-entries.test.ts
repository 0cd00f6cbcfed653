/**
 * A module the package loads by path (`packageModule(...)`: a workflow entry, an interceptor module a bundle adds,
 * a process entry) is not reached by following imports, so the build must name it as an entry
 * (tsconfig.build.json `files`), or an installed package lacks it. A fault run from an installed package failed
 * this way once: the lab's strategy module was bundled by path and missing from dist/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const SHIPPED = ['src', 'host', 'workflows', 'activities', 'cli', 'services', 'lab'];
/** Loaded by path, and on purpose not in the package: the local model is a workspace of its own (packages/). */
const NOT_SHIPPED = new Set(['lab/local-model/cli.ts', 'lab/local-model/demo.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' ? [] : sources(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

/** The files named by literal `packageModule('a', 'b', ...)` calls in `text`. */
function modulesByPath(text: string): string[] {
  const calls = text.matchAll(/packageModule\(((?:\s*'[^']+'\s*,?)+)\)/g);
  return [...calls].map((m) => `${[...m[1]!.matchAll(/'([^']+)'/g)].map((p) => p[1]).join('/')}.ts`);
}

test('every module the package loads by path is an entry of the build', () => {
  const files = new Set(
    (JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { files: string[] }).files,
  );
  const named = SHIPPED.flatMap((d) => sources(path.join(ROOT, d))).flatMap((f) =>
    modulesByPath(readFileSync(f, 'utf8')),
  );
  expect(named).toContain('lab/strategies/workflows/module.ts');
  const missing = [...new Set(named)].filter((m) => !files.has(m) && !NOT_SHIPPED.has(m));
  expect(missing).toEqual([]);
});

test('the check can fail: a module named by path and left out of the build is found', () => {
  expect(modulesByPath("const M = packageModule('lab', 'somewhere', 'new-module');")).toEqual([
    'lab/somewhere/new-module.ts',
  ]);
});
