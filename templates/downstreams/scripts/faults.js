// @ts-check
// `npm run faults`: the fault protocol (protocol.json) on this project's tools. `ledgerloop faults` starts fresh
// downstreams for each case from the config's `services.<name>.main`: the payment provider stand-in (its own
// SQLite) and the team's orders service, in a schema of its own per case on the PostgreSQL this script finds
// (DATABASE_URL, else a private server from this machine's initdb/pg_ctl; none: it stops, naming both). The
// stand-in refuses to start without an API key, and the worker sends it as the `PAYMENTS_API_KEY` secret, so one
// is generated here for this run (never printed) unless both are set already.
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { startTestPostgres } = require('ledgerloop/testing');

const ROOT = path.resolve(__dirname, '..');
const PACKAGE = path.dirname(require.resolve('ledgerloop/package.json'));
const BIN = path.join(PACKAGE, require('ledgerloop/package.json').bin.ledgerloop);

async function main() {
  // A plain folder (not mkdtemp's 0700): as root, the private server runs as the postgres user, who must pass it.
  const dir = path.join(ROOT, '.data', `faults-${Date.now().toString(36)}`);
  fs.mkdirSync(dir, { recursive: true });
  const pg = await startTestPostgres({ dir: path.join(dir, 'postgres') });
  const key = process.env.VENDOR_PAYMENTS_API_KEY || `sk_test_${randomBytes(12).toString('hex')}`;
  const env = {
    ...process.env,
    DATABASE_URL: pg.url,
    VENDOR_PAYMENTS_API_KEY: key,
    PAYMENTS_API_KEY: process.env.PAYMENTS_API_KEY || key,
  };
  const child = spawn(process.execPath, [BIN, 'faults', ...process.argv.slice(2), 'protocol.json'], {
    cwd: ROOT,
    env,
    stdio: 'inherit',
  });
  const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  await pg.stop();
  if (code === 0) fs.rmSync(dir, { recursive: true, force: true });
  process.exit(/** @type {number} */ (code));
}

main().catch((err) => {
  process.stderr.write(`faults: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
