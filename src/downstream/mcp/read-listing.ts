/**
 * One server's tool listing, read once (`ledgerloop mcp import`): connect, list, disconnect (a stdio server is
 * stopped). Throws `McpConfigError` for a config that cannot work and an `Error` when the server does not connect
 * within the timeout; its text never carries a secret.
 */
import type { ListedTool } from '../../tools/mcp/digest';
import { checkServerConfig, describeServer, type McpServerConfig } from './config';
import { McpConnection } from './connection';

export interface Listing {
  readonly tools: ReadonlyMap<string, ListedTool>;
  readonly serverInfo?: { readonly name: string; readonly version: string };
}

export async function readListing(
  name: string,
  config: McpServerConfig,
  options: { readonly timeoutMs?: number; readonly env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<Listing> {
  const secrets = checkServerConfig(name, config, options.env ?? process.env);
  const timeoutMs = options.timeoutMs ?? 20_000;
  const conn = new McpConnection(name, config, secrets, { connectTimeoutMs: timeoutMs });
  try {
    void conn.start();
    const session = await conn.ready(timeoutMs);
    const tools = conn.tools();
    if (session === undefined || tools === undefined)
      throw new Error(`MCP server ${name} (${describeServer(config)}) did not connect within ${timeoutMs} ms`);
    const info = session.client.getServerVersion();
    return { tools, ...(info !== undefined ? { serverInfo: { name: info.name, version: info.version } } : {}) };
  } finally {
    await conn.close();
  }
}
