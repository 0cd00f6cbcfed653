/**
 * The fault lab's hook on a project worker's MCP servers (host/project/mcp-servers.ts): each stdio server that
 * `LEDGERLOOP_MCP_FAULTS` names is started behind the fault harness (lab/faults/mcp-stdio-fault.ts), with that
 * server's rules and fault directory, so the faults hit the real server the worker spawns. Every worker of a case
 * gets the same variable: the harness counts its rules' hits in the directory, across workers and restarts.
 */
import type { McpServerConfig } from '../../src/downstream/mcp/config';
import type { McpServerWrap } from '../../host/project/mcp-servers';
import { nodeArgsFor, packageModule } from '../../src/package-paths';
import { MCP_FAULTS_ENV, type McpServerFaults } from './mcp-tool-faults';

/** The harness as the file that runs here: its TypeScript source in a clone, the compiled file when installed. */
const HARNESS = packageModule('lab', 'faults', 'mcp-stdio-fault');

/** Thrown at the worker's start: the faults name a server that is not on stdio, or the variable is not readable. */
export class McpHarnessError extends Error {
  override readonly name = 'McpHarness.Invalid';
}

/** The wrap for `env`'s MCP faults, or undefined when it names none. */
export function mcpHarnessWrapFromEnv(env: NodeJS.ProcessEnv): McpServerWrap | undefined {
  const text = env[MCP_FAULTS_ENV];
  if (text === undefined || text === '') return undefined;
  let faults: Record<string, McpServerFaults>;
  try {
    faults = JSON.parse(text) as Record<string, McpServerFaults>;
  } catch {
    throw new McpHarnessError(`${MCP_FAULTS_ENV} is not JSON`);
  }
  return (name: string, server: McpServerConfig): McpServerConfig => {
    const f = faults[name];
    if (f === undefined) return server;
    if (!('command' in server))
      throw new McpHarnessError(`MCP server ${name}: faults are injected in front of a stdio server only`);
    return {
      ...server,
      command: process.execPath,
      args: [...nodeArgsFor(HARNESS), server.command, ...(server.args ?? [])],
      env: { ...server.env, MCP_FAULT_DIR: f.dir, MCP_FAULT_RULES: JSON.stringify(f.rules) },
    };
  };
}
