/**
 * A project's MCP servers (the config's `mcp` module): what its worker connects to. The module exports `servers`
 * (server name to `McpServerConfig`, the name a checked-in tool set's `server` gives) and may export `options`
 * (`McpServersOptions`: restart backoff, call timeout). Loaded by the worker only: the connections do I/O and need
 * the optional peer dependency `@modelcontextprotocol/sdk`.
 */
import type { McpServerConfig } from '../../src/downstream/mcp/config';
import type { McpServers, McpServersOptions } from '../../src/downstream/mcp/servers';
import { loadUserModule, ProjectConfigError, type ProjectConfig } from './config';

/** Turns a server's config into the one the worker starts (the fault lab puts its harness in front). */
export type McpServerWrap = (name: string, server: McpServerConfig) => McpServerConfig;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The project's MCP servers, not yet started. Throws `ProjectConfigError` (field `mcp`) for a module that cannot
 * be loaded, exports no `servers` object, or a server config `mcpServers` refuses (`McpConfigError`'s message).
 */
export async function loadProjectMcp(config: ProjectConfig, file: string, wrap?: McpServerWrap): Promise<McpServers> {
  const fail = (message: string): never => {
    throw new ProjectConfigError(config.file, [{ field: 'mcp', message }]);
  };
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(file);
  } catch (err) {
    return fail(`cannot load ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const fromDefault = isRecord(mod['default']) ? mod['default'] : {};
  const servers = mod['servers'] ?? fromDefault['servers'];
  const options = mod['options'] ?? fromDefault['options'] ?? {};
  if (!isRecord(servers) || Object.keys(servers).length === 0)
    return fail(`${file} must export servers: an object of server name to its config (command and args, or url)`);
  const bad = Object.entries(servers).find(([, s]) => !isRecord(s));
  if (bad !== undefined) return fail(`${file}: servers.${bad[0]} is not a server config`);
  if (!isRecord(options)) return fail(`${file}: options must be an object (McpServersOptions)`);
  const given = servers as Record<string, McpServerConfig>;
  const started = Object.fromEntries(Object.entries(given).map(([n, s]) => [n, wrap ? wrap(n, s) : s]));
  /* eslint-disable @typescript-eslint/no-require-imports -- the SDK is an optional peer: loaded only when used */
  const { mcpServers } =
    require('../../src/downstream/mcp/servers') as typeof import('../../src/downstream/mcp/servers');
  /* eslint-enable @typescript-eslint/no-require-imports */
  try {
    return mcpServers(started, options as McpServersOptions);
  } catch (err) {
    return fail((err as Error).message);
  }
}
