/**
 * The worker's MCP servers: one connection per configured server, started with the worker and closed on its
 * shutdown, and the transport of each MCP tool on it (`McpWiring` of src/downstream/transports.ts).
 *
 *   const mcp = mcpServers({ files: { command: 'mcp-server-filesystem', args: [dir] } });
 *   await mcp.start();                 // spawns / connects; a server that is down keeps being retried
 *   createWorker({ ..., mcp });        // the wiring reaches each MCP tool through it
 *   await mcp.close();                 // stops every stdio server
 */
import type { AnyTool } from '../../domain/tool';
import { isMcpTool } from '../../tools/mcp/declare';
import type { McpWiring } from '../transports';
import type { Transport } from '../transport';
import { checkServerConfig, type McpConnectionOptions, type McpServerConfig } from './config';
import { McpConnection, type McpConnectionLog } from './connection';
import { McpTransport } from './mcp-transport';

export interface McpServersOptions extends McpConnectionOptions {
  /** Where secrets are read from; default the worker's environment. */
  readonly secrets?: Readonly<Record<string, string | undefined>>;
  readonly log?: McpConnectionLog;
}

export class McpServers implements McpWiring {
  readonly connections: ReadonlyMap<string, McpConnection>;

  /** Throws `McpConfigError` for a config that cannot work (nothing is started). */
  constructor(servers: Readonly<Record<string, McpServerConfig>>, options: McpServersOptions = {}) {
    const env = options.secrets ?? process.env;
    const made = new Map<string, McpConnection>();
    for (const [name, config] of Object.entries(servers)) {
      const secrets = checkServerConfig(name, config, env);
      made.set(name, new McpConnection(name, config, secrets, options, options.log));
    }
    this.connections = made;
  }

  /** Connects every server once (a failure keeps retrying in the background). */
  async start(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.start()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }

  problems(tools: readonly AnyTool[]): string[] {
    const problems: string[] = [];
    for (const tool of tools) {
      if (!isMcpTool(tool)) problems.push(`${tool.name}: an MCP transport without an MCP declaration`);
      else if (!this.connections.has(tool.mcp.server))
        problems.push(`${tool.name}: its MCP server ${tool.mcp.server} is not configured in the worker`);
    }
    return problems;
  }

  transportFor(tool: AnyTool): Transport | undefined {
    if (!isMcpTool(tool)) return undefined;
    const conn = this.connections.get(tool.mcp.server);
    return conn === undefined ? undefined : new McpTransport(conn, tool.mcp);
  }
}

/** The worker's MCP servers by name (see the file's example). */
export function mcpServers(
  servers: Readonly<Record<string, McpServerConfig>>,
  options: McpServersOptions = {},
): McpServers {
  return new McpServers(servers, options);
}
