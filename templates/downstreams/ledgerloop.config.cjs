// The project config every `ledgerloop` command reads in this folder: `worker`, `start`, `show`, `replay`,
// `faults` and `keys` all work on this project's tools, functions, scenarios, policy and services.
const { defineConfig } = require('ledgerloop');
const { VENDOR_PAYMENTS_MAIN } = require('ledgerloop/testing');

module.exports = defineConfig({
  // The worker's tools module: the workflow bundle carries it in place of the built-in tools.
  tools: './src/workflow-tools.js',
  // The function tools' implementations: the worker loads them (they do I/O; the bundle never does).
  functions: './src/functions.js',
  // A scripted model (deterministic, for tests and the fault protocol). For a real model: { kind: 'openai', ... }.
  model: { kind: 'scripted', scenarios: './src/scenarios.js' },
  policy: './policy.json',
  services: {
    // The payment provider: an HTTP API that speaks none of Ledgerloop's contract (here the vendor stand-in; its
    // `main` lets `ledgerloop faults` start a fresh one for each case).
    'vendor-payments': { url: process.env.PAYMENTS_URL || 'http://127.0.0.1:4400', main: VENDOR_PAYMENTS_MAIN },
    // The team's own orders service on its PostgreSQL, through the kit.
    orders: { url: process.env.ORDERS_URL || 'http://127.0.0.1:4500', main: './src/orders-main.js' },
  },
  taskQueue: process.env.SHOP_TASK_QUEUE || 'shop',
});
