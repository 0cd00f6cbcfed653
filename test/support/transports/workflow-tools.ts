/** The tools module of the transport tests: what the workflow bundle and the activities read (no zod here). */
import { defineToolModule, ToolRegistry } from '../../../src/tools/registry';

export const TRANSPORT_TOOL_NAMES = ['ledger_post', 'mail_send', 'payments_charge', 'payments_refund'] as const;

export const workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'transport-tests',
      names: TRANSPORT_TOOL_NAMES,
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require() in a function defers the module
      load: () => (require('./tools') as typeof import('./tools')).transportTools,
    }),
  ],
);
