/**
 * What a `ledgerloop` command loads before it does anything. Every command connects through
 * `src/server/connection-config.ts`; the worker package (`@temporalio/worker`, with the bundler and the native
 * runtime's JavaScript) is only for workers, so client code must not load it to connect: it was about 0.5 s of
 * the connection module's 1.0 s to load. The binary registers every command but loads a command's
 * implementation only when it runs, so `ledgerloop --version` or `show` loads neither the worker package nor the
 * fault lab (docs/performance.md, "Tests").
 */
import { execFileSync, spawnSync } from 'node:child_process';
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

/** The same, for the `ledgerloop` binary's entry run with `args` (the files loaded when it exits). */
function workerFilesLoadedByCommand(args: readonly string[]): string[] {
  const script = `process.argv = [process.argv[0], 'ledgerloop', ...${JSON.stringify(args)}];
process.on('exit', () => {
  const loaded = Object.keys(require.cache).filter((f) => /[\\/]@temporalio[\\/]worker[\\/]|[\\/]lab[\\/]faults[\\/]runner/.test(f));
  process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n');
});
require('./cli/main.ts');`;
  const run = spawnSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: REPO, encoding: 'utf8' });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (line === undefined) throw new Error(`no report from the command: ${run.stderr.slice(-500)}`);
  return JSON.parse(line.slice('LOADED '.length)) as string[];
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

test('the binary registers every command but loads neither the worker package nor the fault lab for --version', () => {
  expect(workerFilesLoadedByCommand(['--version'])).toEqual([]);
});

test('nor for a run command that fails before it connects', () => {
  // `show` with no run id stops at its arguments; everything its module imports is loaded by then.
  expect(workerFilesLoadedByCommand(['show'])).toEqual([]);
});
