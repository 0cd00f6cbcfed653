/**
 * A fault protocol's fault on an MCP tool, as the rule of the harness in front of the MCP server the worker spawns
 * (lab/faults/mcp-stdio-fault.ts, rules in lab/faults/mcp-fault-rules.ts). Pure: the runner arms the rules in the
 * workers' environment and reads what fired from the harness's fault directory.
 *
 * | point                      | kind                 | harness rule                 | what the worker sees                       |
 * |----------------------------|----------------------|------------------------------|--------------------------------------------|
 * | `downstream.before_commit` | `delay`              | `before_send` `delay`        | the request reaches the server late        |
 * | `downstream.before_commit` | `restart_downstream` | `before_send` `restart`      | the server dies before the request arrives |
 * | `downstream.after_commit`  | `drop_response`      | `after_commit` `drop_response` | no answer, the server up: `callTimeoutMs` ends the wait |
 * | `downstream.after_commit`  | `delay`              | `after_commit` `delay`       | the answer arrives late                    |
 * | `downstream.after_commit`  | `kill`               | `after_commit` `hold`        | the runner kills the worker while the server's answer is held |
 * | `downstream.after_commit`  | `restart_downstream` | `after_commit` `restart`     | the server dies with its answer; the worker restarts it |
 */
import type { FaultKind } from './catalog';
import { MCP_MAX_HOLD_MS, type McpFaultRule } from './mcp-fault-rules';
import type { ToolFaultPlan, ToolPoint } from './tool-targets';

/** The kinds an MCP tool's fault may take at each point. */
export const MCP_TOOL_KINDS: Readonly<Record<ToolPoint, readonly FaultKind[]>> = {
  'downstream.before_commit': ['delay', 'restart_downstream'],
  'downstream.after_commit': ['kill', 'delay', 'drop_response', 'restart_downstream'],
};

/** How long a `kill`'s answer is held at most when the runner never kills (the case then fails: the fault missed). */
const KILL_HOLD_MS = 60_000;

/** The harness rule of a planned fault on an MCP tool; throws for a kind the point does not take (checked before). */
export function mcpRuleOf(f: ToolFaultPlan): McpFaultRule {
  if (!MCP_TOOL_KINDS[f.at].includes(f.do)) throw new Error(`an MCP tool takes no ${f.do} at ${f.at}`);
  const at = f.at === 'downstream.before_commit' ? 'before_send' : 'after_commit';
  const count = { occurrence: f.occurrence, times: f.times };
  if (f.do === 'restart_downstream') return { at, do: 'restart', tool: f.tool, ...count };
  if (f.do === 'kill') return { at, do: 'hold', tool: f.tool, ...count, ms: KILL_HOLD_MS };
  if (f.do === 'delay') return { at, do: 'delay', tool: f.tool, ...count, ms: Math.min(f.ms, MCP_MAX_HOLD_MS) };
  return { at, do: 'drop_response', tool: f.tool, ...count };
}

/** What the workers' harness in front of one MCP server gets: its fault directory and its rules. */
export interface McpServerFaults {
  readonly dir: string;
  readonly rules: readonly McpFaultRule[];
}

/** The worker environment variable: `{ "<server>": { dir, rules } }`, read by lab/faults/mcp-harness-wrap.ts. */
export const MCP_FAULTS_ENV = 'LEDGERLOOP_MCP_FAULTS';

/** A planned fault on an MCP tool, as far as the harness needs it. */
export type McpPlannedFault = ToolFaultPlan & {
  readonly via?: string;
  readonly service: string;
  readonly mcpTool?: string;
};

/**
 * The harness rules of a case's faults on MCP tools, by server, with each server's fault directory under `caseDir`
 * (`mcp-<server>`). The rule names the tool as its server does (`mcpTool`); its index among its server's rules is
 * the `rule-<n>.hits` file the harness counts it in.
 */
export function mcpServerFaultsOf(
  faults: readonly McpPlannedFault[],
  dirOf: (server: string) => string,
): Record<string, McpServerFaults> {
  const out: Record<string, { dir: string; rules: McpFaultRule[] }> = {};
  for (const f of faults) {
    if (f.via !== 'mcp' || f.mcpTool === undefined) continue;
    const server = (out[f.service] ??= { dir: dirOf(f.service), rules: [] });
    server.rules.push(mcpRuleOf({ ...f, tool: f.mcpTool }));
  }
  return out;
}
