/**
 * The tools module of test/support/mcp/keyed-notes-server.ts's checked-in tool set (`ledgerloop mcp import keyed
 * --confirm-idempotent put_record`, then `keyRetentionMs` added: that server holds every key it saw).
 */
import { mcpToolModule, ToolRegistry } from 'ledgerloop/tool-registry';
import keyed from './keyed.tools.json';

export const workflowTools = new ToolRegistry([], [mcpToolModule(keyed)]);
