/**
// Unfinished: this end-to-end test of a linked project does not pass yet (see the closing note of 2026-12-02); it is
// kept out of the test run by its name. Rename it to test/integration/cli-project.test.ts once it does.
 * The CLI on a project of its own, as a user runs it: a folder outside the repository with its own tool
 * (`book_room` and its compensation), its own service on `ledgerloop/services`, a policy, scripted scenarios and a
 * `ledgerloop.config.cjs` (test/support/booking-project). The package resolves to this checkout
 * (`node_modules/ledgerloop`). Every step is the `ledgerloop` binary run in that folder: `keys`, `worker`,
 * `start` (the project's scenario), `show`, `export` and `replay` (against the project's tools, and refused
 * naming the tool against the built-in ones), and `faults` (a lost response after commit leaves one booking).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import type { AgentRunResult } from '../../src/domain/run';

jest.setTimeout(300_000);

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'ledgerloop.cjs');
const FIXTURE = path.join(REPO, 'test', 'support', 'booking-project');
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-project-'));
const project = path.join(tmp, 'booking-app');
const queue = `booking-${Date.now().toString(36)}`;
let serviceUrl = '';
const children: ChildProcess[] = [];

interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** The project's environment: the server, its service's URL and its own task queue (the config reads both). */
function projectEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: namespace,
    BOOKING_URL: serviceUrl,
    BOOKING_TASK_QUEUE: queue,
  };
  // What the test runner may have set for the repository's own tests is not the project's.
  for (const name of Object.keys(env))
    if (name.startsWith('LEDGERLOOP_') && name !== 'LEDGERLOOP_TEST_WORKERS') delete env[name];
  // The package as an installed project runs it: compiled, from dist/, with no TypeScript loader.
  env['LEDGERLOOP_RUN_FROM_DIST'] = '1';
  return env;
}

function cli(args: readonly string[], cwd = project, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...projectEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, out, err })));
}

/** Spawns a long-running process in the project and resolves with its first stdout line that parses as JSON. */
function startProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; ready: Record<string, unknown> }> {
  const child = spawn(process.execPath, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in 90 s: ${err}`)), 90_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const ready = JSON.parse(line) as Record<string, unknown>;
        clearTimeout(timer);
        resolve({ child, ready });
      } catch {
        // not the ready line
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was ready: ${err}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The newest modification time (ms) of a `.ts` file under `dir`. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(file));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/**
 * The project resolves `ledgerloop` through the package's exports, which name `dist/`, as an installed project's
 * would: build it when it is missing or older than the sources it is built from (`npm run build`).
 */
function ensureBuilt(): void {
  const marker = path.join(REPO, 'dist', 'src', 'index.js');
  const sources = ['src', 'workflows', 'activities', 'services', 'cli', 'lab', 'console'].map((d) =>
    newestSource(path.join(REPO, d)),
  );
  if (existsSync(marker) && statSync(marker).mtimeMs >= Math.max(...sources)) return;
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'build.cjs')], { cwd: REPO, stdio: 'inherit' });
}

beforeAll(() => {
  ensureBuilt();
  cpSync(FIXTURE, project, { recursive: true });
  // The package and zod resolve as an installed project's would: through its node_modules.
  mkdirSync(path.join(project, 'node_modules'));
  symlinkSync(REPO, path.join(project, 'node_modules', 'ledgerloop'), 'dir');
  symlinkSync(path.dirname(require.resolve('zod/package.json')), path.join(project, 'node_modules', 'zod'), 'dir');
}, 600_000);

afterAll(async () => {
  await Promise.all(children.map(stop));
  rmSync(tmp, { recursive: true, force: true });
});

let workflowId = '';
let worker: ChildProcess | undefined;

test('keys writes the project’s keys where its config says, secrets 0600, and prints no secret', async () => {
  const r = await cli(['keys']);
  expect(r.code).toBe(0);
  const dir = path.join(project, '.ledgerloop', 'keys');
  for (const [file, mode] of [
    ['signing-key.json', 0o600],
    ['jwks.json', 0o644],
    ['issuer.json', 0o644],
    ['issuer-key.json', 0o600],
    ['codec-keys', 0o600],
  ] as const) {
    expect(statSync(path.join(dir, file)).mode & 0o777).toBe(mode);
    expect(r.out).toContain(file);
  }
  const d = (JSON.parse(readFileSync(path.join(dir, 'signing-key.json'), 'utf8')) as { d: string }).d;
  expect(`${r.out}${r.err}`).not.toContain(d);
});

test('the project’s service starts on the kit with the project’s key set, and a worker serves the project', async () => {
  const env = { ...projectEnv(), LEDGERLOOP_CAPABILITY_KEYS: path.join(project, '.ledgerloop', 'keys', 'jwks.json') };
  // In this repository the package is TypeScript: the service runs through its loader (with tsx, in-repo).
  const service = await startProcess(['src/service-main.js', '--db', path.join(tmp, 'booking.db'), '--port', '0'], env);
  serviceUrl = String(service.ready['url']);
  expect(service.ready['service']).toBe('booking');
  const started = await startProcess([BIN, 'worker', '--max-cached-workflows', '0'], projectEnv());
  worker = started.child;
  expect(started.ready['worker']).toEqual(expect.any(String));
});

test('start runs the project’s scenario on the project’s queue; the booking is made once', async () => {
  const r = await cli([
    'start',
    '--scenario',
    'book-room',
    '--var',
    'room=r-101',
    '--var',
    'day=2026-12-24',
    '--wait',
    '--json',
  ]);
  expect(r.err).not.toMatch(/unknown scenario/);
  expect(r.code).toBe(0);
  const printed = JSON.parse(r.out) as { workflowId: string; taskQueue: string; result: AgentRunResult };
  workflowId = printed.workflowId;
  expect(printed.taskQueue).toBe(queue);
  expect(printed.result.stopReason).toBe('completed');
  expect(printed.result.calls.map((c) => [c.toolName, c.state])).toEqual([['book_room', 'SUCCEEDED']]);
  // The service's own table: one booking.
  const db = new BetterSqlite3(path.join(tmp, 'booking.db'), { readonly: true });
  try {
    expect(db.prepare('SELECT room, day, status FROM bookings').all()).toEqual([
      { room: 'r-101', day: '2026-12-24', status: 'booked' },
    ]);
  } finally {
    db.close();
  }
  // A scenario the project does not have is refused, naming the project's.
  const bad = await cli(['start', '--scenario', 'wallet-debit']);
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(/unknown scenario "wallet-debit" \(known: book-room\)/);
});

test('show reads the run; with no worker, its advice is the command that serves this project', async () => {
  const shown = await cli(['show', workflowId]);
  expect(shown.code).toBe(0);
  expect(shown.out).toContain('book_room');
  expect(shown.out).toContain(`on task queue ${queue}`);
  await stop(worker!);
  const none = await cli(['show', workflowId, '--timeout', '3s']);
  expect(none.code).toBe(1);
  expect(none.err).toContain('`npx ledgerloop worker` serves this project (ledgerloop.config.cjs');
  expect(none.err).not.toContain('npm start');
});

test('replay takes the project’s tools; without them the history is refused naming book_room, not as a determinism error', async () => {
  const file = path.join(tmp, 'history.json');
  const exported = await cli(['export', workflowId, '--out', file]);
  expect(exported.code).toBe(0);
  const ok = await cli(['replay', file]);
  expect(ok.out).toMatch(/✓ .*history\.json/);
  expect(ok.code).toBe(0);
  // From a folder without a config: the built-in tools.
  const outside = path.join(tmp, 'elsewhere');
  mkdirSync(outside);
  // The history is encrypted with the project's codec keys (its config named them): the same keys, by hand.
  const codec = { LEDGERLOOP_CODEC_KEYS_FILE: path.join(project, '.ledgerloop', 'keys', 'codec-keys') };
  const refused = await cli(['replay', file], outside, codec);
  expect(refused.code).toBe(1);
  expect(refused.out).toContain('Replay.ToolsMissing');
  expect(refused.out).toMatch(/lacks: book_room/);
  expect(refused.out).not.toContain('DeterminismViolationError');
  // Refused before any bundle was built: nothing would replay.
  expect(refused.err).not.toContain('bundling');
}, 600_000);

test('faults runs the project’s protocol against its own tool and service: a lost response after commit leaves one booking', async () => {
  const report = path.join(tmp, 'faults-report.json');
  const r = await cli(['faults', 'protocol.json', '--report', report]);
  if (r.code !== 0) process.stderr.write(`${r.out}\n${r.err}\n`);
  expect(r.code).toBe(0);
  const written = JSON.parse(readFileSync(report, 'utf8')) as {
    passed: boolean;
    cases: { name: string; passed: boolean; metrics: Record<string, unknown> }[];
  };
  expect(written.passed).toBe(true);
  expect(written.cases[0]?.metrics).toMatchObject({
    faults_fired: 1,
    business_effect_count: 1,
    final_state: 'SUCCEEDED',
  });
  expect(Number(written.cases[0]?.metrics['attempt_count'])).toBeGreaterThanOrEqual(2);
});
