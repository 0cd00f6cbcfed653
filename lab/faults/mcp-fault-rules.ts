/**
 * The rules of the MCP fault harness (lab/faults/mcp-stdio-fault.ts), pure: what a rule is, how the harness reads
 * its rules from its environment, and which rule a `tools/call` fires. The harness does the I/O.
 *
 * | point          | kind             | what the harness does                                                           |
 * |----------------|------------------|---------------------------------------------------------------------------------|
 * | `before_send`  | `delay`          | holds the request for `ms`, then passes it on (it reaches the server late)      |
 * | `before_send`  | `restart`        | kills the server before the request reaches it; the worker restarts the server  |
 * | `after_commit` | `drop_response`  | the server answered; the answer is swallowed and the server stays up            |
 * | `after_commit` | `delay`          | holds the server's answer for `ms`                                              |
 * | `after_commit` | `hold`           | holds the server's answer (up to `ms`) and says so, for the runner to kill the worker |
 * | `after_commit` | `restart`        | the server answered; it is killed with its answer, mid-call as the worker sees it |
 *
 * A rule counts the calls it matches (its tool, and `arguments` when given: every field equal) across the
 * harness's restarts, in its fault directory, and fires on the `occurrence`-th to the `occurrence + times - 1`-th.
 */

export const MCP_FAULT_RULES_ENV = 'MCP_FAULT_RULES';

export type McpFaultPoint = 'before_send' | 'after_commit';
export type McpFaultKind = 'drop_response' | 'delay' | 'hold' | 'restart';

export interface McpFaultRule {
  readonly at: McpFaultPoint;
  readonly do: McpFaultKind;
  readonly tool: string;
  /** Only calls whose arguments include these (every field equal, compared as JSON). Default every call. */
  readonly arguments?: Readonly<Record<string, unknown>>;
  /** The n-th matching call (1 = the first). Default 1. */
  readonly occurrence?: number;
  /** How many matching calls from `occurrence` on. Default 1. */
  readonly times?: number;
  /** `delay`: how long; `hold`: the longest the answer is held. Default 2,000 for `delay`, 60,000 for `hold`. */
  readonly ms?: number;
}

/** The kinds each point takes. */
export const MCP_POINT_KINDS: Readonly<Record<McpFaultPoint, readonly McpFaultKind[]>> = {
  before_send: ['delay', 'restart'],
  after_commit: ['drop_response', 'delay', 'hold', 'restart'],
};

/** The longest a rule may hold a message: the harness never blocks a call for longer. */
export const MCP_MAX_HOLD_MS = 120_000;

export class McpFaultRulesError extends Error {
  override readonly name = 'McpFaultRules.Invalid';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkRule(raw: unknown, i: number): McpFaultRule {
  const bad = (why: string): never => {
    throw new McpFaultRulesError(`rule ${i}: ${why}`);
  };
  if (!isRecord(raw)) return bad('must be an object');
  const at = raw['at'];
  if (at !== 'before_send' && at !== 'after_commit') return bad('at must be before_send or after_commit');
  const kinds = MCP_POINT_KINDS[at];
  if (!kinds.includes(raw['do'] as McpFaultKind)) return bad(`${at} takes ${kinds.join(', ')}`);
  if (typeof raw['tool'] !== 'string' || raw['tool'] === '') return bad('tool must be a tool name');
  if (raw['arguments'] !== undefined && !isRecord(raw['arguments'])) return bad('arguments must be an object');
  for (const n of ['occurrence', 'times'] as const)
    if (raw[n] !== undefined && !(Number.isInteger(raw[n]) && (raw[n] as number) >= 1))
      bad(`${n} must be a positive integer`);
  const ms = raw['ms'];
  if (ms !== undefined && !(Number.isInteger(ms) && (ms as number) >= 0 && (ms as number) <= MCP_MAX_HOLD_MS))
    bad(`ms must be an integer from 0 to ${MCP_MAX_HOLD_MS}`);
  return raw as unknown as McpFaultRule;
}

function parseJson(text: string, variable: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new McpFaultRulesError(`${variable} is not JSON`);
  }
}

/**
 * The harness's rules from its environment: `MCP_FAULT_RULES` (a JSON array of rules), and the two short forms the
 * tests started with, read as rules: `MCP_FAULT_LOSE_TOOL` (comma-separated tools: `after_commit` `restart` of each
 * tool's first call) and `MCP_FAULT_DELAY` (`{ tool, ms, arguments }`: `before_send` `delay` of the first matching
 * call). Throws `McpFaultRulesError` naming the bad rule: a harness with a plan it cannot read does not start.
 */
export function mcpFaultRulesFromEnv(env: NodeJS.ProcessEnv): McpFaultRule[] {
  const rules: unknown[] = [];
  const text = env[MCP_FAULT_RULES_ENV];
  if (text !== undefined && text.trim() !== '') {
    const parsed = parseJson(text, MCP_FAULT_RULES_ENV);
    if (!Array.isArray(parsed)) throw new McpFaultRulesError(`${MCP_FAULT_RULES_ENV} is not an array`);
    rules.push(...(parsed as unknown[]));
  }
  for (const tool of (env['MCP_FAULT_LOSE_TOOL'] ?? '').split(',').filter(Boolean))
    rules.push({ at: 'after_commit', do: 'restart', tool });
  const delay = env['MCP_FAULT_DELAY'];
  if (delay !== undefined && delay !== '') {
    const d = parseJson(delay, 'MCP_FAULT_DELAY');
    if (!isRecord(d)) throw new McpFaultRulesError('MCP_FAULT_DELAY is { "tool", "ms", "arguments" }');
    rules.push({ at: 'before_send', do: 'delay', tool: d['tool'], ms: d['ms'], arguments: d['arguments'] });
  }
  return rules.map(checkRule);
}

/** Whether `rule` counts a call of `tool` with `args` (its point aside). */
export function ruleMatches(rule: McpFaultRule, tool: string, args: Readonly<Record<string, unknown>>): boolean {
  if (rule.tool !== tool) return false;
  return Object.entries(rule.arguments ?? {}).every(([k, v]) => JSON.stringify(args[k]) === JSON.stringify(v));
}

/** Whether the `hit`-th call a rule matched is one it fires on. */
export function ruleFires(rule: McpFaultRule, hit: number): boolean {
  const first = rule.occurrence ?? 1;
  return hit >= first && hit < first + (rule.times ?? 1);
}

/** How long a firing `delay` or `hold` keeps its message. */
export function holdMs(rule: McpFaultRule): number {
  return rule.ms ?? (rule.do === 'hold' ? 60_000 : 2_000);
}

/** A rule that fires on a call, with the call's count among the calls the rule matched. */
export interface FiringRule {
  readonly rule: McpFaultRule;
  readonly hit: number;
}

/**
 * The rule a call fires at `at`, counting it against every rule of that point it matches (`count` records one more
 * match of rule `index` and returns its total so far), or undefined. The first firing rule wins.
 */
export function firingRule(
  rules: readonly McpFaultRule[],
  at: McpFaultPoint,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  count: (index: number) => number,
): FiringRule | undefined {
  let fired: FiringRule | undefined;
  rules.forEach((rule, index) => {
    if (rule.at !== at || !ruleMatches(rule, tool, args)) return;
    const hit = count(index);
    if (ruleFires(rule, hit) && fired === undefined) fired = { rule, hit };
  });
  return fired;
}
