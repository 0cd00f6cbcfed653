// @ts-check
// The worker's tools module (the config's `tools`): the workflow bundle carries it in place of the built-in tools.
const { defineToolModule, ToolRegistry } = require('ledgerloop/tool-registry');

exports.workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'payments',
      names: ['charge_card', 'refund_charge'],
      load: () => require('./payments.tools').paymentsTools,
    }),
    defineToolModule({ id: 'orders', names: ['record_order'], load: () => require('./orders.tools').ordersTools }),
  ],
);
