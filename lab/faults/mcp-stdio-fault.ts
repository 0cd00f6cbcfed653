/**
 * A stdio MCP server behind a fault: this process starts the real server (its command and arguments are this
 * script's arguments), passes every line between the worker and it, and, once per fault directory and tool, loses
 * the answer to the first `tools/call` of each tool named by `MCP_FAULT_LOSE_TOOL` (comma-separated): the request
 * reaches the server, its answer is dropped, and the server and this process are killed. Every call of such a tool
 * the server receives is appended to `<MCP_FAULT_DIR>/calls.log` (one line each, `<tool> <id>`), so a test counts
 * what reached the server, across restarts.
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
/** The tool's fault is spent once this file exists (the tool name is a listed one: no path in it). */
const marker = (tool: string): string => join(dir, `lost-${encodeURIComponent(tool)}.marker`);
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
let lostId: unknown;

createInterface({ input: process.stdin }).on('line', (line) => {
  try {
    const msg = JSON.parse(line) as { id?: unknown; method?: string; params?: { name?: string } };
    const tool = msg.params?.name;
    if (msg.method === 'tools/call' && typeof tool === 'string' && loseTools.has(tool)) {
      appendFileSync(join(dir, 'calls.log'), `${tool} ${JSON.stringify(msg.id)}\n`);
      if (!existsSync(marker(tool))) {
        writeFileSync(marker(tool), 'lost');
        lostId = msg.id;
      }
    }
  } catch {
    // not JSON: passed on as it is; the server says what it makes of it
  }
  server.stdin.write(`${line}\n`);
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
