// @ts-check
// The worker's tools module (the config's `tools`): the workflow bundle carries it in place of the built-in tools.
const { defineToolModule, ToolRegistry } = require('ledgerloop/tool-registry');

exports.workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'booking',
      names: ['book_room', 'cancel_booking'],
      load: () => require('./booking.tools').bookingTools,
    }),
  ],
);
