/**
 * The worker's tools module (`createWorker({ tools: require.resolve('./tools/workflow-tools') })`). The worker's
 * bundler puts it in place of the runtime's built-in registry, so every run evaluates this module: it imports
 * no zod and builds nothing. The declarations are built on a run's first lookup, once per worker, and shared.
 */
import { defineToolModule, ToolRegistry } from 'ledgerloop/tool-registry';

export const workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'ticketing',
      names: ['ticketing_open_ticket', 'ticketing_cancel_ticket'],
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require() in a function defers the module
      load: () => (require('./ticketing.tools') as typeof import('./ticketing.tools')).ticketingTools,
    }),
  ],
);
