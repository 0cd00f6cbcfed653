/**
 * An MCP tool set as a tool module of the worker's registry: the module a worker is given as its tools imports
 * this (through `ledgerloop/tool-registry`) with the checked-in JSON file, and builds nothing. The declarations are
 * checked and their schemas compiled on a run's first lookup of one of them, once per worker, and shared.
 *
 *   import filesTools from './mcp/files.tools.json';
 *   export const workflowTools = new ToolRegistry([], [mcpToolModule(filesTools)]);
 */
import { defineToolModule, ToolRegistryError, type ToolModule } from '../registry';

/** The tool names a tool set file declares, read without building anything (its full check comes with `load`). */
function declaredNames(set: unknown): { server: string; names: string[] } {
  const s = set as { server?: unknown; tools?: unknown } | null;
  const tools = Array.isArray(s?.tools) ? (s.tools as unknown[]) : undefined;
  const names = tools?.map((t) => (t as { name?: unknown } | null)?.name);
  if (typeof s?.server !== 'string' || names === undefined || !names.every((n) => typeof n === 'string'))
    throw new ToolRegistryError('an MCP tool set names its server and its tools (run `ledgerloop mcp import`)');
  return { server: s.server, names: names as string[] };
}

/** The tool module of one checked-in MCP tool set (`ledgerloop mcp import` writes it). */
export function mcpToolModule(set: unknown): ToolModule {
  const { server, names } = declaredNames(set);
  return defineToolModule({
    id: `mcp-${server}`.slice(0, 64),
    names,
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require() in a function defers the zod schemas
    load: () => (require('./declare') as typeof import('./declare')).mcpTools(set, `the MCP tool set of ${server}`),
  });
}
