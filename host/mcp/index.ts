/**
 * `ledgerloop/mcp`: MCP servers as governed tools, on the worker's side (docs/mcp.md). Needs the optional peer
 * dependency `@modelcontextprotocol/sdk`. The checked-in tool sets are read in the workflow through
 * `mcpToolModule` of `ledgerloop/tool-registry`; this entry holds what does I/O: the connections and the call.
 *
 *   const mcp = mcpServers({ files: { command: 'mcp-server-filesystem', args: ['./data'] } });
 *   await mcp.start();
 *   const worker = await createWorker({ ..., tools: require.resolve('./tools'), mcp });
 */
export { mcpServers, McpServers, type McpServersOptions } from '../../src/downstream/mcp/servers';
export {
  McpConfigError,
  type McpConnectionOptions,
  type McpHttpServer,
  type McpServerConfig,
  type McpStdioServer,
} from '../../src/downstream/mcp/config';
export {
  callTool,
  OPERATION_META_KEY,
  type CallToolRequest,
  type McpCallOutcome,
  type OperationMeta,
} from '../../src/downstream/mcp/call-tool';
export { McpConnection, type ConnectionState, type McpConnectionLog } from '../../src/downstream/mcp/connection';
export { readListing, type Listing } from '../../src/downstream/mcp/read-listing';
