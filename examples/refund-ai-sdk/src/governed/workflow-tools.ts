/**
 * The worker's tools module (`LedgerloopPlugin({ tools: require.resolve('./workflow-tools') })`): the workflow
 * bundle carries it in place of Ledgerloop's built-in tools. It builds nothing; the declarations are built on
 * first use, once per worker.
 */
import { defineToolModule, ToolRegistry } from 'ledgerloop/tool-registry';

export const workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'refunds',
      names: ['refund_order'],
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require() in a function defers the module
      load: () => (require('./refund.tools') as typeof import('./refund.tools')).refundTools,
    }),
  ],
);
