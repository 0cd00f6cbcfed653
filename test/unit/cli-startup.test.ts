/**
 * What a `ledgerloop` command loads before it does anything. Every command connects through
 * `src/server/connection-config.ts`; the worker package (`@temporalio/worker`, with the bundler and the native
 * runtime's JavaScript) is only for workers, so client code must not load it to connect: it was about 0.5 s of
 * the connection module's 1.0 s to load. (The `ledgerloop` binary still loads it through its worker, demo,
 * replay and fault commands, which are registered eagerly: docs/performance.md, "Tests".)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');

/** The worker-package files a fresh process has loaded after requiring `module`. */
function workerFilesLoadedBy(module: string): string[] {
  const script = `require(${JSON.stringify(module)});
const loaded = Object.keys(require.cache).filter((f) => /[\\\\/]@temporalio[\\\\/]worker[\\\\/]/.test(f));
process.stdout.write(JSON.stringify(loaded));`;
  const out = execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: REPO, encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

jest.setTimeout(60_000);

test('the connection settings a client command uses do not load the worker package', () => {
  expect(workerFilesLoadedBy('./src/server/connection-config')).toEqual([]);
});

test('a run command module does not load it either', () => {
  expect(workerFilesLoadedBy('./cli/commands/show')).toEqual([]);
});

test('the check can fail: the worker entry loads it', () => {
  expect(workerFilesLoadedBy('./src/worker/create-worker').length).toBeGreaterThan(0);
});
