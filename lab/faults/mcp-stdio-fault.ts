/**
 * A stdio MCP server behind faults: this process starts the real server (its command and arguments are this
 * script's arguments), passes every line between the worker and it, and injects the faults of its rules
 * (lab/faults/mcp-fault-rules.ts: `MCP_FAULT_RULES`, or the short forms `MCP_FAULT_LOSE_TOOL` and
 * `MCP_FAULT_DELAY`) into the `tools/call` requests and answers.
 *
 * Its state lives in `MCP_FAULT_DIR`, so it holds across the server's restarts (each restart is a new harness):
 * - `calls.log`: one line (`<tool> <id>`) per call of a tool some rule names, as it reaches the server, so a test
 *   counts what the server received;
 * - `fired.log`: one JSON line (`{ tool, at, do, hit, id, pid }`) per fault that fired; a `hold` is written once the
 *   server's answer is held, which is when the fault runner kills the worker;
 * - `rule-<n>.hits`: how many calls rule n matched so far.
 *
 *   MCP_FAULT_DIR=/tmp/faults MCP_FAULT_LOSE_TOOL=write_file \
 *     node -r tsx/cjs lab/faults/mcp-stdio-fault.ts node_modules/.bin/mcp-server-filesystem /srv/data
 *
 * Loopback only by construction: it speaks to its own child over pipes.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { firingRule, holdMs, mcpFaultRulesFromEnv, type FiringRule } from './mcp-fault-rules';

const [command, ...args] = process.argv.slice(2);
const dir = process.env['MCP_FAULT_DIR'];
if (command === undefined || dir === undefined) {
  process.stderr.write('usage: MCP_FAULT_DIR=<dir> mcp-stdio-fault <server command> [args...]\n');
  process.exit(2);
}
const faultDir: string = dir;
const rules = mcpFaultRulesFromEnv(process.env);
const watched = new Set(rules.map((r) => r.tool));
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
/** The after-commit fault armed for each request id (by its JSON form) whose answer is awaited. */
const armed = new Map<string, Armed>();

interface Armed extends FiringRule {
  readonly tool: string;
  readonly id: unknown;
}

type Call = { id?: unknown; method?: string; params?: { name?: string; arguments?: Record<string, unknown> } };

/** Counts one more match of rule `index`, in the fault directory (one harness at a time writes it). */
function count(index: number): number {
  const file = join(faultDir, `rule-${index}.hits`);
  const hit = (existsSync(file) ? Number(readFileSync(file, 'utf8')) || 0 : 0) + 1;
  writeFileSync(file, String(hit));
  return hit;
}

/** Records a fault that fired, with the count the call had when the rule matched it. */
function fired({ rule, hit, tool, id }: Armed): void {
  const line = { tool, at: rule.at, do: rule.do, hit, id, pid: process.pid };
  appendFileSync(join(faultDir, 'fired.log'), `${JSON.stringify(line)}\n`);
}

/** The server and this process end: the worker sees its connection close, mid-call. */
function killServer(): never {
  server.kill('SIGKILL');
  process.exit(1);
}

/** Passes a request on to the server, logging a watched call and arming its after-commit fault. */
function pass(line: string, msg: Call | undefined): void {
  const tool = msg?.params?.name;
  if (msg?.method === 'tools/call' && typeof tool === 'string' && watched.has(tool)) {
    appendFileSync(join(faultDir, 'calls.log'), `${tool} ${JSON.stringify(msg.id)}\n`);
    const firing = firingRule(rules, 'after_commit', tool, msg.params?.arguments ?? {}, count);
    if (firing !== undefined) armed.set(JSON.stringify(msg.id), { ...firing, tool, id: msg.id });
  }
  if (!server.stdin.writableEnded) server.stdin.write(`${line}\n`);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let msg: Call | undefined;
  try {
    msg = JSON.parse(line) as Call;
  } catch {
    // not JSON: passed on as it is; the server says what it makes of it
  }
  const tool = msg?.params?.name;
  const firing =
    msg?.method === 'tools/call' && typeof tool === 'string'
      ? firingRule(rules, 'before_send', tool, msg.params?.arguments ?? {}, count)
      : undefined;
  if (firing === undefined) return pass(line, msg);
  fired({ ...firing, tool: tool!, id: msg?.id });
  if (firing.rule.do === 'restart') killServer();
  setTimeout(() => pass(line, msg), holdMs(firing.rule));
});
process.stdin.on('end', () => {
  server.stdin.end();
  // The worker is gone (or closing): nobody reads the answers. A server that does not exit on its own is stopped.
  setTimeout(killServer, 2_000).unref();
});

createInterface({ input: server.stdout }).on('line', (line) => {
  let id: string | undefined;
  try {
    id = JSON.stringify((JSON.parse(line) as { id?: unknown }).id);
  } catch {
    // not JSON: passed on
  }
  const fault = id === undefined ? undefined : armed.get(id);
  if (fault === undefined) {
    process.stdout.write(`${line}\n`);
    return;
  }
  armed.delete(id!);
  fired(fault);
  // The server answered and acted; what becomes of its answer is the fault.
  if (fault.rule.do === 'restart') killServer();
  if (fault.rule.do === 'drop_response') return;
  setTimeout(() => process.stdout.write(`${line}\n`), holdMs(fault.rule));
});
server.on('exit', (code) => process.exit(code ?? 1));
