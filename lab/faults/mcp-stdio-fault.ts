/**
 * A stdio MCP server behind a fault: this process starts the real server (its command and arguments are this
 * script's arguments), passes every line between the worker and it, and, once per fault directory and tool, loses
 * the answer to the first `tools/call` of each tool named by `MCP_FAULT_LOSE_TOOL` (comma-separated): the request
 * reaches the server, its answer is dropped, and the server and this process are killed. Every call of such a tool
 * the server receives is appended to `<MCP_FAULT_DIR>/calls.log` (one line each, `<tool> <id>`), so a test counts
 * what reached the server, across restarts.
 *
 * `MCP_FAULT_DELAY` (JSON `{ "tool", "ms", "arguments" }`) holds each `tools/call` of `tool` whose arguments include
 * `arguments` (every field equal) for `ms` before passing it on, once per fault directory: the worker's wait ends
 * first (the call is UNKNOWN) and the request reaches the server late, after whatever the worker did next. The
 * held request is logged when it is passed on.
 *
 *   node -r tsx/cjs lab/faults/mcp-stdio-fault.ts node_modules/.bin/mcp-server-filesystem /srv/data
 *
 * Loopback only by construction: it speaks to its own child over pipes.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [command, ...args] = process.argv.slice(2);
const dir = process.env['MCP_FAULT_DIR'];
const loseTools = new Set((process.env['MCP_FAULT_LOSE_TOOL'] ?? '').split(',').filter(Boolean));
if (command === undefined || dir === undefined) {
  process.stderr.write('usage: MCP_FAULT_DIR=<dir> mcp-stdio-fault <server command> [args...]\n');
  process.exit(2);
}
const delay = readDelay(process.env['MCP_FAULT_DELAY']);
/** A fault is spent once its file exists (the tool name is a listed one: no path in it). */
const marker = (what: 'lost' | 'delayed', tool: string): string =>
  join(dir, `${what}-${encodeURIComponent(tool)}.marker`);
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
let lostId: unknown;

interface Delay {
  readonly tool: string;
  readonly ms: number;
  readonly arguments: Readonly<Record<string, unknown>>;
}

function readDelay(spec: string | undefined): Delay | undefined {
  if (spec === undefined || spec === '') return undefined;
  const d = JSON.parse(spec) as Partial<Delay>;
  if (typeof d.tool !== 'string' || typeof d.ms !== 'number' || typeof d.arguments !== 'object' || d.arguments === null)
    throw new Error('MCP_FAULT_DELAY is { "tool": string, "ms": number, "arguments": object }');
  return { tool: d.tool, ms: Math.min(Math.max(0, d.ms), 60_000), arguments: d.arguments };
}

type Call = { id?: unknown; method?: string; params?: { name?: string; arguments?: Record<string, unknown> } };

function held(msg: Call): boolean {
  if (delay === undefined || msg.method !== 'tools/call' || msg.params?.name !== delay.tool) return false;
  const args = msg.params.arguments ?? {};
  if (!Object.entries(delay.arguments).every(([k, v]) => JSON.stringify(args[k]) === JSON.stringify(v))) return false;
  if (existsSync(marker('delayed', delay.tool))) return false;
  writeFileSync(marker('delayed', delay.tool), 'delayed');
  return true;
}

/** Logs a call of a watched tool as it reaches the server, and arms the lost answer for the tool's first one. */
function pass(line: string, msg: Call | undefined): void {
  const tool = msg?.params?.name;
  if (msg?.method === 'tools/call' && typeof tool === 'string' && (loseTools.has(tool) || tool === delay?.tool)) {
    appendFileSync(join(dir!, 'calls.log'), `${tool} ${JSON.stringify(msg.id)}\n`);
    if (loseTools.has(tool) && !existsSync(marker('lost', tool))) {
      writeFileSync(marker('lost', tool), 'lost');
      lostId = msg.id;
    }
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
  if (msg !== undefined && held(msg)) setTimeout(() => pass(line, msg), delay!.ms);
  else pass(line, msg);
});
process.stdin.on('end', () => server.stdin.end());

createInterface({ input: server.stdout }).on('line', (line) => {
  if (lostId !== undefined) {
    try {
      if ((JSON.parse(line) as { id?: unknown }).id === lostId) {
        // The server answered and acted; the answer is lost with the server, mid-call as the worker sees it.
        server.kill('SIGKILL');
        process.exit(1);
      }
    } catch {
      // not JSON: passed on
    }
  }
  process.stdout.write(`${line}\n`);
});
server.on('exit', (code) => process.exit(code ?? 1));
