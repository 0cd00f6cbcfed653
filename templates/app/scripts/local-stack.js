// @ts-check
// This project on one machine, for `npm start` and the tests: a Temporal dev server (or the one TEMPORAL_ADDRESS
// names), the booking service and a `ledgerloop worker`, each a real process; `cli()` runs any `ledgerloop`
// command against them. Everything stops with `stop()`, and the processes stop with this one.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { openServiceDatabase } = require('ledgerloop/services');
const { startDevServer } = require('ledgerloop/testing');

const ROOT = path.resolve(__dirname, '..');
const PACKAGE = path.dirname(require.resolve('ledgerloop/package.json'));
const BIN = path.join(PACKAGE, require('ledgerloop/package.json').bin.ledgerloop);
const KEYS = path.join(ROOT, '.ledgerloop', 'keys');

/** @typedef {{ code: number, out: string, err: string }} CliRun */

/**
 * Runs `ledgerloop <args>` in the project folder and collects what it printed.
 * @param {readonly string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<CliRun>}
 */
function runCli(args, env) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, out, err })));
}

/**
 * Spawns a long-running process and resolves with its first stdout line that is JSON (its "ready" line).
 * @param {string} what
 * @param {readonly string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, ready: Record<string, unknown> }>}
 */
function startProcess(what, args, env) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${what} did not start in 120 s: ${err}`));
    }, 120_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      clearTimeout(timer);
      resolve({ child, ready: JSON.parse(line) });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready: ${err}`));
    });
  });
}

/** @param {import('node:child_process').ChildProcess} child */
function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve(undefined));
    child.kill('SIGTERM');
  });
}

/**
 * Starts the server (unless TEMPORAL_ADDRESS names one), the service and a worker on a task queue of their own.
 * @param {string} name a label for the data folder and the task queue
 * @param {{ ui?: boolean }} [opts] `ui`: the server's Web UI too (for a stack that stays up)
 */
async function startLocalStack(name, opts = {}) {
  const dataDir = path.join(ROOT, '.data', `${name}-${Date.now().toString(36)}`);
  fs.mkdirSync(dataDir, { recursive: true });
  const base = { ...process.env, NO_COLOR: '1' };
  if (!fs.existsSync(path.join(KEYS, 'jwks.json'))) {
    const keys = await runCli(['keys'], base);
    if (keys.code !== 0) throw new Error(`ledgerloop keys failed: ${keys.err}`);
  }
  const server = process.env.TEMPORAL_ADDRESS
    ? undefined
    : await startDevServer({
        headless: !opts.ui,
        ephemeral: true,
        dbFile: path.join(dataDir, 'temporal.db'),
        logFile: path.join(dataDir, 'temporal.log'),
      });
  /** @type {import('node:child_process').ChildProcess[]} */
  const children = [];
  try {
    const dbPath = path.join(dataDir, 'booking.db');
    const service = await startProcess(
      'the booking service',
      [path.join(ROOT, 'src', 'service-main.js'), '--db', dbPath, '--port', '0'],
      { ...base, LEDGERLOOP_CAPABILITY_KEYS: path.join(KEYS, 'jwks.json') },
    );
    children.push(service.child);
    const env = {
      ...base,
      ...(server ? { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace } : {}),
      BOOKING_URL: String(service.ready.url),
      BOOKING_TASK_QUEUE: `booking-${name}-${Date.now().toString(36)}`,
    };
    const worker = await startProcess('the worker', [BIN, 'worker'], env);
    children.push(worker.child);
    return {
      /** The Temporal frontend, its namespace and Web UI (if any), and the worker's task queue. */
      address: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
      namespace: env.TEMPORAL_NAMESPACE || 'default',
      uiUrl: server?.uiUrl,
      taskQueue: env.BOOKING_TASK_QUEUE,
      /** @param {readonly string[]} args */
      cli: (args) => runCli(args, env),
      /** The service's own table: every booking it holds. */
      bookings() {
        const db = openServiceDatabase(dbPath);
        try {
          return /** @type {{ room: string, day: string, status: string }[]} */ (
            db.prepare('SELECT room, day, status FROM bookings ORDER BY room, day').all()
          );
        } finally {
          db.close();
        }
      },
      async stop() {
        await Promise.all(children.map(stopProcess));
        await server?.stop();
      },
    };
  } catch (err) {
    await Promise.all(children.map(stopProcess));
    await server?.stop();
    throw err;
  }
}

module.exports = { startLocalStack };
