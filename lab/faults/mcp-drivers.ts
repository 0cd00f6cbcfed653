/**
 * The runner's side of faults on MCP tools (lab/faults/mcp-tool-faults.ts): the harness in front of each faulted
 * server keeps its records in a directory of the case (`mcp-<server>`), and the runner reads them: which faults
 * fired (`fired.log`), how many calls of the faulted tools reached the server (`calls.log`, the effects counted at
 * the server's door), and when a `kill`'s answer is held, which is when it kills the workers waiting on it.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { killWhenHeld, type DriverContext } from './drivers';
import { mcpRuleOf, mcpServerFaultsOf, type McpServerFaults } from './mcp-tool-faults';
import type { PlannedCase, PlannedFault } from './plan';
import type { ToolPoint } from './tool-targets';

/** The harness directories of a case's faulted MCP servers, made under `caseDir`, with each server's rules. */
export function prepareMcpFaults(pc: PlannedCase, caseDir: string): Record<string, McpServerFaults> {
  const faults = mcpServerFaultsOf(
    pc.faults.map((f) => ({ ...f, at: f.at as ToolPoint, tool: f.tool ?? '' })),
    (server) => path.join(caseDir, `mcp-${server}`),
  );
  for (const { dir } of Object.values(faults)) mkdirSync(dir, { recursive: true });
  return faults;
}

interface FiredLine {
  readonly tool: string;
  readonly at: string;
  readonly do: string;
  readonly hit: number;
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

function firedLines(dir: string): FiredLine[] {
  return lines(path.join(dir, 'fired.log')).map((l) => JSON.parse(l) as FiredLine);
}

/** Whether the harness acted on the fault (its rule fired on a call of the tool). */
export function mcpFired(faults: Readonly<Record<string, McpServerFaults>>, f: PlannedFault): boolean {
  const server = faults[f.service];
  if (server === undefined || f.mcpTool === undefined) return false;
  const rule = mcpRuleOf({ ...f, at: f.at as ToolPoint, tool: f.mcpTool });
  return firedLines(server.dir).some((l) => l.tool === rule.tool && l.at === rule.at && l.do === rule.do);
}

/** The calls of the faulted tools that reached each faulted server, summed: the effects counted at their door. */
export function mcpCallsAtServers(faults: Readonly<Record<string, McpServerFaults>>): number {
  return Object.values(faults).reduce((n, s) => n + lines(path.join(s.dir, 'calls.log')).length, 0);
}

/** `kill` on an MCP tool: once the harness holds the server's answer, SIGKILL the workers waiting on it. */
export async function mcpKill(
  ctx: DriverContext,
  faults: Readonly<Record<string, McpServerFaults>>,
  f: PlannedFault,
): Promise<void> {
  await killWhenHeld(ctx, f, () => mcpFired(faults, f), {
    who: 'the harness',
    answered: `MCP server ${f.service} answered`,
  });
}
