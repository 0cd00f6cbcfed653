/**
 * A fault protocol's fault on an MCP tool becomes the rule of the harness in front of the server: each kind the
 * table takes maps to the harness act it names, every mapped rule is one the harness accepts, and a kind the
 * point does not take is refused rather than mapped to something else.
 */
import { mcpFaultRulesFromEnv } from '../../lab/faults/mcp-fault-rules';
import { MCP_TOOL_KINDS, mcpRuleOf } from '../../lab/faults/mcp-tool-faults';
import type { ToolFaultPlan } from '../../lab/faults/tool-targets';

const plan = (
  at: ToolFaultPlan['at'],
  kind: ToolFaultPlan['do'],
  more: Partial<ToolFaultPlan> = {},
): ToolFaultPlan => ({
  at,
  do: kind,
  tool: 'write_file',
  occurrence: 1,
  times: 1,
  ms: 0,
  ...more,
});

describe('an MCP tool fault as a harness rule', () => {
  it.each([
    ['downstream.before_commit', 'delay', 'before_send', 'delay'],
    ['downstream.before_commit', 'restart_downstream', 'before_send', 'restart'],
    ['downstream.after_commit', 'drop_response', 'after_commit', 'drop_response'],
    ['downstream.after_commit', 'delay', 'after_commit', 'delay'],
    ['downstream.after_commit', 'kill', 'after_commit', 'hold'],
    ['downstream.after_commit', 'restart_downstream', 'after_commit', 'restart'],
  ] as const)('%s %s is the harness rule %s %s', (at, kind, hAt, hDo) => {
    expect(mcpRuleOf(plan(at, kind))).toMatchObject({ at: hAt, do: hDo, tool: 'write_file' });
  });

  it('occurrence and times carry over; a delay keeps its ms, capped at the harness limit', () => {
    expect(mcpRuleOf(plan('downstream.after_commit', 'drop_response', { occurrence: 2, times: 3 }))).toEqual({
      at: 'after_commit',
      do: 'drop_response',
      tool: 'write_file',
      occurrence: 2,
      times: 3,
    });
    expect(mcpRuleOf(plan('downstream.before_commit', 'delay', { ms: 4_000 })).ms).toBe(4_000);
    expect(mcpRuleOf(plan('downstream.before_commit', 'delay', { ms: 10_000_000 })).ms).toBe(120_000);
  });

  it('every rule the table maps to is one the harness reads back unchanged', () => {
    const rules = Object.entries(MCP_TOOL_KINDS).flatMap(([at, kinds]) =>
      kinds.map((k) => mcpRuleOf(plan(at as ToolFaultPlan['at'], k, { ms: 1_000 }))),
    );
    expect(mcpFaultRulesFromEnv({ MCP_FAULT_RULES: JSON.stringify(rules) })).toEqual(rules);
  });

  it.each([
    ['downstream.before_commit', 'kill'],
    ['downstream.before_commit', 'drop_response'],
    ['downstream.after_commit', 'error_5xx'],
  ] as const)('%s %s is refused, not mapped to another act', (at, kind) => {
    expect(() => mcpRuleOf(plan(at, kind))).toThrow(`an MCP tool takes no ${kind} at ${at}`);
  });
});
