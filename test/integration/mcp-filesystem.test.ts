/**
 * The MCP transport against the registry's server-filesystem, in its own process over stdio, with effects counted
 * where the server keeps them (the file on disk) and at the server's door (the fault harness's call log). The
 * recovery decision is the one table's (`planResend`), fed by the MCP transport's lookup: no MCP copy of the rules.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import type { ToolIntent } from '../../src/domain/operation-key';
import { planResend, type LookupAnswer } from '../../src/domain/recovery';
import { STRATEGIES } from '../../src/domain/retry-strategies';
import { promisesOf } from '../../src/domain/transport';
import { mcpServers, type McpServers } from '../../src/downstream/mcp/servers';
import type { Transport } from '../../src/downstream/transport';
import { mcpTools, type McpTool } from '../../src/tools/mcp/declare';
import { toolDigest, type ListedTool } from '../../src/tools/mcp/digest';
import { MCP_TOOL_SET_FORMAT } from '../../src/tools/mcp/tool-set';

const ROOT = resolve(__dirname, '../..');
const FAULT = join(ROOT, 'lab/faults/mcp-stdio-fault.ts');
const SERVER = join(ROOT, 'node_modules/.bin/mcp-server-filesystem');

let data: string;
let faults: string;
let servers: McpServers;

function declaration(listed: ListedTool, extra: Record<string, Json>): Record<string, Json> {
  return {
    name: `files_${listed.name}`,
    mcpName: listed.name,
    version: 1,
    description: listed.name,
    inputSchema: listed.inputSchema as Json,
    hints: {},
    digest: toolDigest(listed),
    maxArgumentBytes: 65_536,
    maxResultBytes: 65_536,
    approval: 'none',
    onToolError: 'unknown',
    ...extra,
  };
}

function toolsFrom(listing: ReadonlyMap<string, ListedTool>): McpTool[] {
  const write = listing.get('write_file');
  const read = listing.get('read_text_file');
  if (write === undefined || read === undefined)
    throw new Error('server-filesystem lists no write_file/read_text_file');
  return mcpTools({
    format: MCP_TOOL_SET_FORMAT,
    server: 'files',
    tools: [
      declaration(write, {
        effect: 'write',
        contract: 'reconcilable_by_lookup',
        lookup: {
          tool: 'read_text_file',
          arguments: { path: { $arg: 'path' } },
          found: { textEquals: { $arg: 'content' } },
        },
      }),
      declaration(read, { effect: 'read', contract: 'none' }),
    ],
  });
}

function attempt(tool: McpTool, body: Record<string, Json>, n: number): Parameters<Transport['send']>[0] {
  const argumentsHash = hashCanonical(body);
  return {
    tool,
    intent: { argumentsHash, operationKey: `op-${argumentsHash.slice(0, 8)}`, tenant: 't1' } as ToolIntent,
    body,
    key: `op-${argumentsHash.slice(0, 8)}`,
    attempt: n,
    fence: n,
    intentAt: '2026-12-07T00:00:00.000Z',
    signal: new AbortController().signal,
    deadlineAtMs: Date.now() + 20_000,
  };
}

/** What the one recovery table decides for a second attempt of `tool`, the lookup answered by `lookup`. */
function secondAttempt(tool: McpTool, transport: Transport, lookup: () => Promise<LookupAnswer>) {
  return planResend(
    {
      contract: tool.idempotency,
      promises: promisesOf(tool),
      strategy: STRATEGIES.check_receipt,
      attempt: 2,
      dispatch: 1,
      firstSentAtMs: Date.now() - 1_000,
      nowMs: Date.now(),
    },
    { retention: () => transport.retention(), lookup },
  );
}

async function readyListing(): Promise<ReadonlyMap<string, ListedTool>> {
  const conn = servers.connections.get('files')!;
  const session = await conn.ready(20_000);
  if (session === undefined) throw new Error(`server-filesystem did not connect (${conn.state})`);
  return conn.tools()!;
}

beforeEach(async () => {
  data = mkdtempSync(join(tmpdir(), 'll-mcp-data-'));
  faults = mkdtempSync(join(tmpdir(), 'll-mcp-faults-'));
  servers = mcpServers(
    {
      files: {
        command: process.execPath,
        args: ['-r', 'tsx/cjs', FAULT, SERVER, data],
        env: { MCP_FAULT_DIR: faults, MCP_FAULT_LOSE_TOOL: 'write_file', NODE_PATH: join(ROOT, 'node_modules') },
        cwd: ROOT,
      },
    },
    { restartDelayMs: 50, callTimeoutMs: 15_000, connectTimeoutMs: 20_000 },
  );
  await servers.start();
});

afterEach(async () => {
  await servers.close();
  rmSync(data, { recursive: true, force: true });
  rmSync(faults, { recursive: true, force: true });
});

const calls = (): number => readFileSync(join(faults, 'calls.log'), 'utf8').trim().split('\n').length;

test('a write_file whose answer is lost with its killed server is UNKNOWN, found by reading the file, and written once', async () => {
  const [write] = toolsFrom(await readyListing());
  const transport = servers.transportFor(write!)!;
  const path = join(data, 'note.txt');
  const body = { path, content: 'hello once', tenant: 't1' };

  const first = await transport.send(attempt(write!, body, 1));
  expect(first.kind).toBe('response_lost');
  expect(readFileSync(path, 'utf8')).toBe('hello once');
  const writtenAt = statSync(path).mtimeMs;

  // The connection restarts the killed server; the table asks it what happened before anything is resent.
  await readyListing();
  expect(servers.connections.get('files')!.restarts).toBeGreaterThanOrEqual(1);
  const decision = await secondAttempt(write!, transport, () =>
    transport.lookup({ tool: write!, intent: attempt(write!, body, 2).intent, key: 'k', body, seal: false }),
  );
  expect(decision.kind).toBe('answered');
  expect(calls()).toBe(1);
  expect(statSync(path).mtimeMs).toBe(writtenAt);
});

test('positive control: a write that never reached the file is not found, so nothing is resent blindly', async () => {
  const [write] = toolsFrom(await readyListing());
  const transport = servers.transportFor(write!)!;
  const body = { path: join(data, 'never.txt'), content: 'absent', tenant: 't1' };
  const found = await transport.lookup({
    tool: write!,
    intent: attempt(write!, body, 2).intent,
    key: 'k',
    body,
    seal: false,
  });
  expect(found).toEqual({ kind: 'not_found', sealed: false });
  const decision = await secondAttempt(write!, transport, async () => found);
  expect(decision).toMatchObject({ kind: 'refuse', code: 'Dispatch.AbsenceUnproven' });
});

test('a tool whose live schema differs from its declaration is refused before anything is sent', async () => {
  const listing = new Map(await readyListing());
  const write = listing.get('write_file')!;
  listing.set('write_file', { ...write, annotations: { readOnlyHint: true } });
  const [stale] = toolsFrom(listing);
  const out = await servers
    .transportFor(stale!)!
    .send(attempt(stale!, { path: join(data, 'x'), content: 'x', tenant: 't1' }, 1));
  expect(out).toMatchObject({ kind: 'rejected', reason: 'Mcp.ToolDrift' });
  expect(() => statSync(join(data, 'x'))).toThrow();
});
