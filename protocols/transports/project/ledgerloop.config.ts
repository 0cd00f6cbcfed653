/**
 * The project the transport protocols run on (`ledgerloop faults --config protocols/transports/project/ledgerloop.config.ts
 * protocols/transports/<file>.json`): tools that speak none of Ledgerloop's contract, against the vendor payments
 * server, which the fault runner starts fresh for every case (its own process and SQLite file); and the `files` MCP
 * server (server-filesystem over stdio, ./mcp-servers.ts), which each worker starts.
 *
 * The vendor's API key is a development key of this lab project only (the vendor refuses to start without one, the
 * workers send it as the `PAYMENTS_API_KEY` secret); a key set in the environment wins.
 */
import path from 'node:path';

const DEV_KEY = 'sk_test_transport_protocols_0123';
process.env['VENDOR_PAYMENTS_API_KEY'] ??= DEV_KEY;
process.env['PAYMENTS_API_KEY'] ??= process.env['VENDOR_PAYMENTS_API_KEY'];

export default {
  tools: './workflow-tools.ts',
  functions: './functions.ts',
  mcp: './mcp-servers.ts',
  model: { kind: 'scripted', scenarios: './scenarios.ts' },
  policy: {
    version: 'transport-protocols/1',
    rules: [
      { action: 'payments.charge', maxAmountMinor: 100_000, currency: 'EUR' },
      { action: 'mcp.files.write_file' },
    ],
  },
  services: {
    'vendor-payments': {
      url: 'http://127.0.0.1:4242',
      main: path.join(__dirname, '../../../services/vendor-payments/main.ts'),
    },
  },
};
