/**
 * The MCP fault harness (lab/faults/mcp-stdio-fault.ts) on the wire, in front of a stand-in stdio server that
 * answers every request and counts what it received: each rule kind does what the fault protocol names, counted by
 * occurrence across the harness's restarts, and a call no rule fires on passes both ways (the positive control).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { mcpFaultRulesFromEnv, McpFaultRulesError, type McpFaultRule } from '../../lab/faults/mcp-fault-rules';

const ROOT = path.resolve(__dirname, '..', '..');
const HARNESS = path.join(ROOT, 'lab/faults/mcp-stdio-fault.ts');
/** A stand-in server: answers each request with its id, appending the request's tool to `<dir>/server.log`. */
const SERVER = `
const fs = require('node:fs'); const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (l) => { const m = JSON.parse(l); fs.appendFileSync(process.argv[1] + '/server.log', m.params.name + '\\n');
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }) + '\\n'); });`;

let dir: string;
/** Every harness a test started: stopped after it, whatever it asserted, so a hung harness fails one test only. */
const started: ChildProcessWithoutNullStreams[] = [];
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'll-mcp-harness-'))));
afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Harness {
  readonly child: ChildProcessWithoutNullStreams;
  /** Sends a call; resolves with its answer, or with how the harness ended without one. */
  call(id: number, tool: string, args?: Record<string, unknown>): Promise<'answered' | 'closed'>;
}

function harness(rules: readonly McpFaultRule[]): Harness {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', HARNESS, process.execPath, '-e', SERVER, dir], {
    cwd: ROOT,
    env: { ...process.env, MCP_FAULT_DIR: dir, MCP_FAULT_RULES: JSON.stringify(rules) },
  });
  started.push(child);
  const answers = new Map<number, () => void>();
  createInterface({ input: child.stdout }).on('line', (l) => answers.get((JSON.parse(l) as { id: number }).id)?.());
  const closed = new Promise<'closed'>((resolve) => child.once('exit', () => resolve('closed')));
  return {
    child,
    call(id, tool, args = {}) {
      const answered = new Promise<'answered'>((resolve) => answers.set(id, () => resolve('answered')));
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } })}\n`,
      );
      return Promise.race([answered, closed]);
    },
  };
}

const lines = (file: string): string[] =>
  existsSync(path.join(dir, file)) ? readFileSync(path.join(dir, file), 'utf8').trim().split('\n').filter(Boolean) : [];
const firedKinds = (): string[] => lines('fired.log').map((l) => (JSON.parse(l) as { do: string }).do);

/** A call the harness neither answers nor ends on within `ms` (a dropped or held answer). */
async function unanswered(h: Harness, id: number, tool: string, ms: number): Promise<boolean> {
  const timer = new Promise<'silent'>((resolve) => setTimeout(() => resolve('silent'), ms));
  return (await Promise.race([h.call(id, tool), timer])) === 'silent';
}

describe('the MCP fault harness', () => {
  it('a restart after the commit kills the server with its answer; the call reached the server once', async () => {
    const h = harness([{ at: 'after_commit', do: 'restart', tool: 'write_file' }]);
    expect(await h.call(1, 'write_file')).toBe('closed');
    expect(lines('server.log')).toEqual(['write_file']);
    expect(lines('calls.log')).toHaveLength(1);
    expect(firedKinds()).toEqual(['restart']);
  });

  it('a restart before sending kills the server before the request reaches it', async () => {
    const h = harness([{ at: 'before_send', do: 'restart', tool: 'write_file' }]);
    expect(await h.call(1, 'write_file')).toBe('closed');
    expect(lines('server.log')).toEqual([]);
    expect(lines('calls.log')).toEqual([]);
  });

  it('a dropped answer is swallowed while the server stays up and answers the next call', async () => {
    const h = harness([{ at: 'after_commit', do: 'drop_response', tool: 'write_file' }]);
    expect(await unanswered(h, 1, 'write_file', 1_500)).toBe(true);
    expect(await h.call(2, 'write_file')).toBe('answered');
    expect(lines('server.log')).toEqual(['write_file', 'write_file']);
    expect(firedKinds()).toEqual(['drop_response']);
  });

  it('a hold keeps the answer and says so in fired.log before the answer leaves', async () => {
    const h = harness([{ at: 'after_commit', do: 'hold', tool: 'write_file', ms: 60_000 }]);
    expect(await unanswered(h, 1, 'write_file', 1_500)).toBe(true);
    expect(firedKinds()).toEqual(['hold']);
    expect(lines('server.log')).toEqual(['write_file']);
  });

  it('occurrence and times count matching calls across restarts of the harness', async () => {
    const rules: McpFaultRule[] = [{ at: 'after_commit', do: 'restart', tool: 'write_file', occurrence: 2, times: 2 }];
    const first = harness(rules);
    expect(await first.call(1, 'write_file')).toBe('answered');
    expect(await first.call(2, 'write_file')).toBe('closed');
    expect(await harness(rules).call(3, 'write_file')).toBe('closed');
    const fourth = harness(rules);
    expect(await fourth.call(4, 'write_file')).toBe('answered');
    expect(lines('server.log')).toHaveLength(4);
    expect(firedKinds()).toEqual(['restart', 'restart']);
  });

  it('positive control: a call of a tool no rule names passes both ways, unlogged', async () => {
    const h = harness([{ at: 'after_commit', do: 'restart', tool: 'write_file' }]);
    expect(await h.call(1, 'read_text_file')).toBe('answered');
    expect(lines('server.log')).toEqual(['read_text_file']);
    expect(lines('calls.log')).toEqual([]);
    expect(firedKinds()).toEqual([]);
  });
});

describe('the harness rules from the environment', () => {
  it('the short forms of the first tests read as rules', () => {
    expect(
      mcpFaultRulesFromEnv({
        MCP_FAULT_LOSE_TOOL: 'a,b',
        MCP_FAULT_DELAY: JSON.stringify({ tool: 'c', ms: 10, arguments: { id: 'slow' } }),
      }),
    ).toEqual([
      { at: 'after_commit', do: 'restart', tool: 'a' },
      { at: 'after_commit', do: 'restart', tool: 'b' },
      { at: 'before_send', do: 'delay', tool: 'c', ms: 10, arguments: { id: 'slow' } },
    ]);
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    [
      'a kind the point does not take',
      JSON.stringify([{ at: 'before_send', do: 'hold', tool: 't' }]),
      /rule 0: before_send takes/,
    ],
    ['no tool', JSON.stringify([{ at: 'after_commit', do: 'restart' }]), /rule 0: tool/],
    [
      'a zero occurrence',
      JSON.stringify([{ at: 'after_commit', do: 'restart', tool: 't', occurrence: 0 }]),
      /occurrence/,
    ],
    ['an endless hold', JSON.stringify([{ at: 'after_commit', do: 'hold', tool: 't', ms: 1e9 }]), /ms must be/],
  ])('a plan with %s is refused by name', (_what, text, message) => {
    expect(() => mcpFaultRulesFromEnv({ MCP_FAULT_RULES: text })).toThrow(McpFaultRulesError);
    expect(() => mcpFaultRulesFromEnv({ MCP_FAULT_RULES: text })).toThrow(message);
  });

  it('positive control: a good plan is read as written', () => {
    const rules = [{ at: 'after_commit', do: 'hold', tool: 't', ms: 5_000 }];
    expect(mcpFaultRulesFromEnv({ MCP_FAULT_RULES: JSON.stringify(rules) })).toEqual(rules);
  });
});
