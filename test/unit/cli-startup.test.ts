/**
 * What a `ledgerloop` command loads before it does anything. Every command connects through
 * `host/server/connection-config.ts`; the worker package (`@temporalio/worker`, with the bundler and the native
 * runtime's JavaScript) is only for workers, so client code must not load it to connect: it was about 0.5 s of
 * the connection module's 1.0 s to load. The binary registers every command but loads a command's
 * implementation only when it runs, so `ledgerloop --version` or `show` loads neither the worker package nor the
 * fault lab (docs/performance.md, "Tests"). With tracing off (the default) a client command does not load
 * OpenTelemetry either: about 300 modules.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { TS_LOADER } from '../../services/spawn';

const REPO = path.resolve(__dirname, '..', '..');

const WORKER_PACKAGE = String.raw`[\\/]@temporalio[\\/]worker[\\/]`;
const OPENTELEMETRY = String.raw`[\\/]@opentelemetry[\\/]`;

/**
 * The files matching `pattern` a fresh process (under the binary's loader) has loaded once `setup` is done: a
 * statement, or a `return` of a promise, which may fail (only what it loaded is asked).
 */
function filesLoadedAfter(setup: string, pattern: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const script = `const pattern = new RegExp(${JSON.stringify(pattern)});
Promise.resolve().then(() => { ${setup} }).catch(() => undefined).finally(() => {
  process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((f) => pattern.test(f))));
});`;
  const out = execFileSync(process.execPath, ['-r', TS_LOADER, '-e', script], { cwd: REPO, encoding: 'utf8', env });
  return JSON.parse(out) as string[];
}

/** The files matching `pattern` a fresh process has loaded after requiring `module` (default: the worker package). */
function filesLoadedBy(module: string, pattern = WORKER_PACKAGE): string[] {
  return filesLoadedAfter(`require(${JSON.stringify(module)});`, pattern);
}

/** What `openSession` (every client command's connection) loaded once it connected, under `env`. */
function filesLoadedToConnect(pattern: string, env: NodeJS.ProcessEnv): string[] {
  // The profile file does not exist: the connection is refused after the tracing decision, which comes first.
  return filesLoadedAfter(
    `process.env.TEMPORAL_CONFIG_FILE = '/nonexistent/ledgerloop-temporal.toml';
return require('./cli/connect').openSession({ address: '127.0.0.1:1', namespace: 'default' });`,
    pattern,
    env,
  );
}

/** The same, for the `ledgerloop` binary's entry run with `args` (the files loaded when it exits). */
function workerFilesLoadedByCommand(args: readonly string[]): string[] {
  const script = `process.argv = [process.argv[0], 'ledgerloop', ...${JSON.stringify(args)}];
process.on('exit', () => {
  const loaded = Object.keys(require.cache).filter((f) => /[\\/]@temporalio[\\/]worker[\\/]|[\\/]lab[\\/]faults[\\/]runner/.test(f));
  process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n');
});
require('./cli/main.ts');`;
  const run = spawnSync(process.execPath, ['-r', TS_LOADER, '-e', script], { cwd: REPO, encoding: 'utf8' });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (line === undefined) throw new Error(`no report from the command: ${run.stderr.slice(-500)}`);
  return JSON.parse(line.slice('LOADED '.length)) as string[];
}

jest.setTimeout(60_000);

test('the connection settings a client command uses do not load the worker package', () => {
  expect(filesLoadedBy('./host/server/connection-config')).toEqual([]);
});

test('a run command module does not load it either', () => {
  expect(filesLoadedBy('./cli/commands/show')).toEqual([]);
});

test('the check can fail: the worker entry loads it', () => {
  expect(filesLoadedBy('./host/worker/create-worker').length).toBeGreaterThan(0);
});

test('the binary registers every command but loads neither the worker package nor the fault lab for --version', () => {
  expect(workerFilesLoadedByCommand(['--version'])).toEqual([]);
});

test('nor for a run command that fails before it connects', () => {
  // `show` with no run id stops at its arguments; everything its module imports is loaded by then.
  expect(workerFilesLoadedByCommand(['show'])).toEqual([]);
});

test('a client command with tracing off does not load OpenTelemetry', () => {
  expect(filesLoadedToConnect(OPENTELEMETRY, { ...process.env, LEDGERLOOP_TRACING: 'off' })).toEqual([]);
});

test('the check can fail: with tracing on the same connection loads it', () => {
  expect(filesLoadedToConnect(OPENTELEMETRY, { ...process.env, LEDGERLOOP_TRACING: 'console' }).length).toBeGreaterThan(
    0,
  );
});
