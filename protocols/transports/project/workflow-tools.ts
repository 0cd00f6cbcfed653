/** The tools module of the transport protocols' project: what the workflow bundle and the activities read. */
import { defineToolModule, ToolRegistry } from '../../../src/tools/registry';

export const workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'transport-protocols',
      names: ['vendor_charge', 'vendor_charge_sdk'],
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require() in a function defers the module
      load: () => (require('./tools') as typeof import('./tools')).vendorTools,
    }),
  ],
);
