/**
 * The worker's tools module (`createWorker({ tools: require.resolve('./tools') })`): the checked-in tool set of
 * the `files` MCP server, written by `npm run import-tools` and reviewed by the team. The workflow bundle carries
 * it, so a run sees this file, never the server's live listing.
 */
import { mcpToolModule, ToolRegistry } from 'ledgerloop/tool-registry';
import files from '../mcp/files.tools.json';

export const workflowTools = new ToolRegistry([], [mcpToolModule(files)]);
