// The project config every `ledgerloop` command reads in this folder (docs/cli.md).
const { defineConfig } = require('ledgerloop');

module.exports = defineConfig({
  tools: './src/workflow-tools.js',
  model: { kind: 'scripted', scenarios: './src/scenarios.js' },
  policy: './policy.json',
  services: {
    booking: { url: process.env.BOOKING_URL || 'http://127.0.0.1:4300', main: './src/service-main.js' },
  },
  taskQueue: process.env.BOOKING_TASK_QUEUE || 'booking',
});
