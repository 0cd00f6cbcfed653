/**
 * The tools module of the transport protocols' project: what the workflow bundle and the activities read. The MCP
 * tools are the checked-in set of examples/mcp-files (server-filesystem; `write_file` reconcilable by a
 * `read_text_file` lookup).
 */
import { defineToolModule, ToolRegistry } from '../../../src/tools/registry';
import { mcpToolModule } from '../../../src/tools/mcp/module';
import files from '../../../examples/mcp-files/mcp/files.tools.json';

export const workflowTools = new ToolRegistry(
  [],
  [
    defineToolModule({
      id: 'transport-protocols',
      names: ['vendor_charge', 'vendor_charge_sdk'],
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require() in a function defers the module
      load: () => (require('./tools') as typeof import('./tools')).vendorTools,
    }),
    mcpToolModule(files),
  ],
);
