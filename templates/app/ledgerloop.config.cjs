// The project config every `ledgerloop` command reads in this folder: `worker`, `start`, `show`, `replay`,
// `faults` and `keys` all work on this project's tools, scenarios, policy, services and keys.
const { defineConfig } = require('ledgerloop');

module.exports = defineConfig({
  // The worker's tools module: the workflow bundle carries it in place of the built-in tools.
  tools: './src/workflow-tools.js',
  // A scripted model (deterministic, for tests and the fault protocol). For a real model: { kind: 'openai', ... }.
  model: { kind: 'scripted', scenarios: './src/scenarios.js' },
  policy: './policy.json',
  services: {
    booking: { url: process.env.BOOKING_URL || 'http://127.0.0.1:4300', main: './src/service-main.js' },
  },
  taskQueue: process.env.BOOKING_TASK_QUEUE || 'booking',
});
