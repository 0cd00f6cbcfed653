/**
 * `npm test`: starts a Temporal dev server (or uses TEMPORAL_ADDRESS), runs jest against it with
 * TEMPORAL_ADDRESS exported, stops the server, and prints one closing line `N passed, M failed[, K skipped]`.
 * With `LEDGERLOOP_TARGET=cluster` it brings up the local cluster's Temporal on PostgreSQL instead
 * (lab/cluster/: the server built from its Go module) and stops it afterwards.
 *
 *   node -r tsx/cjs scripts/test.ts [jest args...]
 *   LEDGERLOOP_TARGET=cluster node -r tsx/cjs scripts/test.ts --selectProjects integration
 *
 * Exits with jest's exit code, and non-zero when no test ran.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster } from '../lab/cluster/cluster';
import { configValue } from '../src/config';
import { connectOrStart } from '../host/server/dev-server';
import { DATA_DIR, REPO_ROOT } from '../host/server/temporal-binaries';

interface JestJsonResult {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numRuntimeErrorTestSuites: number;
}

const RESULTS_FILE = path.join(DATA_DIR, 'jest-results.json');

/** Where the tests' Temporal comes from: `dev` (default) or `cluster` (LEDGERLOOP_TARGET). */
function target(): 'dev' | 'cluster' {
  return configValue('LEDGERLOOP_TARGET') ?? 'dev';
}

/**
 * Jest workers (LEDGERLOOP_TEST_WORKERS, default 3). The files wait on real processes and timers as much as they
 * compute: on this 2-core machine two workers took the suite from 1,022 s in band to 405 s, and a third fills the
 * cores the first two leave idle while they wait (266 s against 305 s side by side, docs/performance.md, "Sixth
 * pass"). 1 runs in band.
 */
function jestWorkers(): string[] {
  const n = configValue('LEDGERLOOP_TEST_WORKERS') ?? 3;
  return n === 1 ? ['--runInBand'] : [`--maxWorkers=${n}`];
}

/** The Temporal server jest runs against, and the line that says which. */
interface TestServer {
  readonly address: string;
  readonly namespace: string;
  readonly banner: string;
  stop(): Promise<void>;
}

/** The local cluster's Temporal server on PostgreSQL (no services or workers: the tests bring their own). */
async function clusterServer(): Promise<TestServer> {
  const started = Date.now();
  const cluster = await startCluster((line) => process.stderr.write(`test: ${line}\n`));
  return {
    address: cluster.address,
    namespace: 'default',
    banner: `Temporal cluster ${cluster.address} on PostgreSQL ready in ${Date.now() - started} ms`,
    stop: () => cluster.stop(),
  };
}

async function devServer(): Promise<TestServer> {
  const logFile = path.join(DATA_DIR, 'temporal-test.log');
  fs.rmSync(logFile, { force: true });
  const server = await connectOrStart({ headless: true, ephemeral: true, logFile });
  return {
    address: server.address,
    namespace: server.namespace,
    banner: server.external
      ? `using the Temporal server at ${server.address}`
      : `Temporal dev server ${server.address} ready in ${server.startupMs} ms (log ${path.relative(REPO_ROOT, server.logFile)})`,
    stop: () => server.stop(),
  };
}

function summarize(file: string): { line: string; total: number; failed: number } | undefined {
  let r: JestJsonResult;
  try {
    r = JSON.parse(fs.readFileSync(file, 'utf8')) as JestJsonResult;
  } catch {
    return undefined;
  }
  // A suite that failed to load has no test results of its own: count it as a failure.
  const failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
  const skipped = r.numPendingTests + r.numTodoTests;
  let line = `${r.numPassedTests} passed, ${failed} failed`;
  if (skipped > 0) line += `, ${skipped} skipped`;
  return { line, total: r.numTotalTests, failed };
}

async function main(): Promise<number> {
  const jestArgs = process.argv.slice(2);
  // Configuration first: a wrong value stops here, naming the variable, before any server starts.
  const where = target();
  const workers = jestWorkers();
  fs.mkdirSync(DATA_DIR, { recursive: true });
  fs.rmSync(RESULTS_FILE, { force: true });

  let server: TestServer | undefined;
  let jest: ChildProcess | undefined;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  const stopServer = (): Promise<void> => (stopped ??= server ? server.stop() : Promise.resolve());
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\ntest: ${signal}: stopping\n`);
    jest?.kill(signal);
    void stopServer().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    server = where === 'cluster' ? await clusterServer() : await devServer();
    process.stderr.write(`test: ${server.banner}\n`);

    const jestBin = path.join(REPO_ROOT, 'node_modules', '.bin', 'jest');
    // --forceExit: a test that times out can leave a worker polling; the run must still end (CI has a hard limit).
    const args = [...workers, '--forceExit', '--json', '--outputFile', RESULTS_FILE, ...jestArgs];
    const child = spawn(jestBin, args, {
      cwd: REPO_ROOT,
      stdio: 'inherit',
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace },
    });
    jest = child;
    // A watchdog: whatever hangs, the whole test run ends within its budget and says so.
    const budgetMs = configValue('LEDGERLOOP_TEST_BUDGET_MS') ?? 50 * 60_000;
    let timedOut = false;
    const watchdog = setTimeout(() => {
      timedOut = true;
      process.stderr.write(`\ntest: jest still running after ${Math.round(budgetMs / 60_000)} min: stopping it\n`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }, budgetMs);
    const code = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c, signal) => resolve(c ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)));
    });
    clearTimeout(watchdog);
    jest = undefined;
    await stopServer();
    if (timedOut) return code === 0 ? 1 : code;
    if (stopping) return code;

    const summary = summarize(RESULTS_FILE);
    if (!summary) {
      process.stderr.write(`test: jest wrote no results to ${RESULTS_FILE} (exit code ${code})\n`);
      return code === 0 ? 1 : code;
    }
    process.stdout.write(`\n${summary.line}\n`);
    if (summary.total === 0) {
      process.stderr.write('test: jest ran no tests\n');
      return code === 0 ? 1 : code;
    }
    return code;
  } catch (err) {
    process.stderr.write(`test: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  } finally {
    await stopServer().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`test: ${String(err)}\n`);
    process.exit(1);
  },
);
