// @ts-check
// `npm run faults`: the fault protocol (protocol.json) on this project's payment tools. `ledgerloop faults` starts a
// fresh provider stand-in for each case from the config's `services['vendor-payments'].main`; the stand-in refuses
// to start without an API key, and the worker sends it as the `PAYMENTS_API_KEY` secret, so one is generated here
// for this run (never printed) unless both are set already.
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');

const PACKAGE = path.dirname(require.resolve('ledgerloop/package.json'));
const BIN = path.join(PACKAGE, require('ledgerloop/package.json').bin.ledgerloop);

const key = process.env.VENDOR_PAYMENTS_API_KEY || `sk_test_${randomBytes(12).toString('hex')}`;
const env = { ...process.env, VENDOR_PAYMENTS_API_KEY: key, PAYMENTS_API_KEY: process.env.PAYMENTS_API_KEY || key };
const child = spawn(process.execPath, [BIN, 'faults', ...process.argv.slice(2), 'protocol.json'], {
  cwd: path.resolve(__dirname, '..'),
  env,
  stdio: 'inherit',
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
