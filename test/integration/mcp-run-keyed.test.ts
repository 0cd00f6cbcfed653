/**
 * MCP tools inside real runs, against a test-only MCP server in its own process (test/support/mcp/
 * keyed-notes-server.ts, on @modelcontextprotocol/sdk's server) that keeps its effects and the `_meta` it received in
 * its own files. A fault harness (lab/faults/mcp-stdio-fault.ts) loses the first answer of each tool with the
 * server. The tool set is the import's defaults (`ledgerloop mcp import keyed --confirm-idempotent put_record`):
 *
 * - `append_note` has no annotations: it waits for approval, and after its lost answer nothing is resent. The call
 *   goes to an operator, and the run's stop names it.
 * - `put_record` (confirmed idempotent, the set declares the server's key retention) is the positive control: its
 *   lost answer is resent under the same key, the server deduplicates by the key it read from `_meta`, and the call
 *   settles with one effect.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { readLedger, startAgentRun } from '../../host/client/runs';
import { createWorker } from '../../host/worker/create-worker';
import { generateSigningKey } from '../../src/capability/capability-keys';
import type { AgentRunResult } from '../../src/domain/run';
import { OPERATION_META_KEY } from '../../src/downstream/mcp/call-tool';
import { mcpServers, type McpServers } from '../../src/downstream/mcp/servers';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { scriptedModel, type Scenario } from '../../src/planner/scripted-model';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { quietRuntime, taskQueue } from '../helpers/stack';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..');
const FAULT = path.join(ROOT, 'lab/faults/mcp-stdio-fault.ts');
const SERVER = path.join(ROOT, 'test/support/mcp/keyed-notes-server.ts');
const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';

const scenarios: Readonly<Record<string, Scenario>> = {
  'append-note': (vars) => [
    { proposals: [{ name: 'keyed_append_note', arguments: { text: vars['text'] } }] },
    { final: (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ')}.` },
  ],
  'put-record': (vars) => [
    { proposals: [{ name: 'keyed_put_record', arguments: { id: vars['id'], value: vars['value'] } }] },
    { final: (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ')}.` },
  ],
};

const policy = {
  version: 'mcp-keyed-test/1',
  decisionTtlMs: 60_000,
  rules: [
    { action: 'mcp.keyed.append_note', principals: ['user:*'] },
    { action: 'mcp.keyed.put_record', principals: ['user:*'] },
  ],
};

let dir: string;
let store: string;
let faults: string;
let issuer: DevIssuer;
let mcp: McpServers;
let worker: Worker;
let workerDone: Promise<void>;
let closeWorkerConnection: () => Promise<void>;
let connection: Connection;
let client: Client;
let tq: string;

const lines = (file: string): string[] => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
/** The calls of `tool` that reached the server's door (the fault harness's log), across restarts. */
const atDoor = (tool: string): number =>
  lines(path.join(faults, 'calls.log')).filter((l) => l.startsWith(`${tool} `)).length;
/** The `_meta` of each call of `tool`, as the server received it. */
const metaSeen = (tool: string): Array<Record<string, unknown>> =>
  lines(path.join(store, 'meta.jsonl'))
    .map((l) => JSON.parse(l) as { tool: string; meta: Record<string, unknown> | null })
    .filter((m) => m.tool === tool)
    .map((m) => (m.meta?.[OPERATION_META_KEY] ?? {}) as Record<string, unknown>);

async function start(
  scenario: string,
  vars: Record<string, unknown>,
  deadlineMs: number,
  caps?: { toolAttemptMs: number },
): Promise<WorkflowHandle> {
  const workflowId = `mcp-keyed-${scenario}-${Date.now()}`;
  return startAgentRun(client, {
    workflowId,
    taskQueue: tq,
    identityToken: await issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    input: {
      principal: { id: 'user:alice', tenant: 'acme' },
      goal: `MCP ${scenario}`,
      strategy: 'same_key_replay',
      planner: { kind: 'scripted', scenario, vars },
      deadlineAt: new Date(Date.now() + deadlineMs).toISOString(),
      ...(caps !== undefined ? { caps } : {}),
    },
  });
}

async function poll<T>(probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  quietRuntime();
  dir = mkdtempSync(path.join(os.tmpdir(), 'll-mcp-keyed-'));
  store = path.join(dir, 'store');
  faults = path.join(dir, 'faults');
  mkdirSync(store);
  mkdirSync(faults);
  issuer = await createDevIssuer(path.join(dir, 'keys'));
  mcp = mcpServers(
    {
      keyed: {
        command: process.execPath,
        args: ['-r', 'tsx/cjs', FAULT, process.execPath, '-r', 'tsx/cjs', SERVER, store],
        env: {
          MCP_FAULT_DIR: faults,
          MCP_FAULT_LOSE_TOOL: 'append_note,put_record',
          MCP_FAULT_DELAY: JSON.stringify({ tool: 'put_record', ms: 6_000, arguments: { id: 'slow' } }),
          NODE_PATH: path.join(ROOT, 'node_modules'),
        },
        cwd: ROOT,
      },
    },
    { restartDelayMs: 50, callTimeoutMs: 10_000 },
  );
  await mcp.start();
  tq = taskQueue('mcp-keyed');
  const started = await createWorker({
    tools: require.resolve('../support/mcp/keyed-tools'),
    services: {},
    mcp,
    policy,
    model: scriptedModel(scenarios),
    capabilityKey: generateSigningKey(),
    identityIssuers: [issuer.config],
    taskQueue: tq,
    address,
    maxCachedWorkflows: 0,
  });
  worker = started.worker;
  closeWorkerConnection = () => started.connection.close();
  workerDone = worker.run();
  connection = await Connection.connect({ address });
  client = new Client({ connection });
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await workerDone;
  await closeWorkerConnection?.();
  await mcp?.close();
  await connection?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an MCP tool with no annotations', () => {
  let handle: WorkflowHandle;
  let waiting: LedgerSnapshot;
  let result: AgentRunResult;

  beforeAll(async () => {
    handle = await start('append-note', { text: 'hello' }, 40_000);
    // The import's default for a tool with no hints: a human approves each call before anything is sent.
    const pending = await poll(async () => (await handle.query(pendingApprovalsQuery))[0]);
    expect(atDoor('append_note')).toBe(0);
    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          logicalCallId: pending.logicalCallId,
          argumentsHash: pending.argumentsHash,
          policyVersion: pending.policyVersion,
          token: await issuer.issueFor(
            { purpose: 'approve', run: handle.workflowId, call: pending.logicalCallId },
            'manager:carol',
            'acme',
            ['approver'],
          ),
          decision: 'approve',
        },
      ],
    });
    waiting = await poll(async () => {
      const s = await readLedger(handle);
      return s.projection.status === 'waiting_for_operator' ? s : undefined;
    });
    // Nobody resolves it: the deadline ends the run, which names what it leaves standing.
    result = (await handle.result()) as AgentRunResult;
  });

  test('waits for an approval before anything is sent, and its lost answer goes to an operator, never resent', () => {
    const types = waiting.events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['ApprovalRequested', 'ApprovalGranted', 'OperatorWaitStarted']));
    expect(types.indexOf('ApprovalGranted')).toBeLessThan(types.indexOf('ToolAttemptStarted'));
    const [call] = Object.values(waiting.projection.calls);
    expect(call).toMatchObject({ toolName: 'keyed_append_note', state: 'UNKNOWN', approvedBy: 'manager:carol' });
    // It ran once (the server's own storage holds the note) and reached the server once: no blind resend.
    expect(atDoor('append_note')).toBe(1);
    expect(lines(path.join(store, 'notes.jsonl'))).toEqual([JSON.stringify({ text: 'hello' })]);
  });

  test("the run's stop names the UNKNOWN call it leaves for an operator", () => {
    expect(result.stopReason).toBe('outcome_unknown');
    expect(result.leftStanding).toEqual([
      expect.objectContaining({ toolName: 'keyed_append_note', state: 'UNKNOWN', why: 'outcome_unknown' }),
    ]);
    expect(atDoor('append_note')).toBe(1);
  });
});

describe('positive control: a confirmed idempotent MCP tool on a server that reads the key', () => {
  let result: AgentRunResult;
  let ledger: LedgerSnapshot;

  beforeAll(async () => {
    const handle = await start('put-record', { id: 'r1', value: 'v1' }, 60_000);
    result = (await handle.result()) as AgentRunResult;
    ledger = await readLedger(handle);
  });

  test('its lost answer is resent under the same key, deduplicated by the server, and settles with one effect', () => {
    expect(result.stopReason).toBe('completed');
    const [call] = result.calls;
    expect(call).toMatchObject({ toolName: 'keyed_put_record', state: 'SUCCEEDED' });
    // One dispatch, two attempts: Temporal retried the activity after the lost answer, and the table let the second
    // attempt resend under the same key (MCP has no "replayed" flag, so the ledger records a plain result).
    expect(ledger.projection.calls[call!.logicalCallId]).toMatchObject({ dispatches: 1, attempts: 2 });
    expect(ledger.events.map((e) => e.type)).not.toContain('OperatorWaitStarted');
    // Confirmed idempotent and not destructive: no approval asked.
    expect(ledger.events.map((e) => e.type)).not.toContain('ApprovalRequested');
    // Two requests reached the server, one effect is in its storage.
    expect(atDoor('put_record')).toBe(2);
    expect(lines(path.join(store, 'effects.jsonl'))).toEqual([JSON.stringify({ key: call!.operationKey, id: 'r1' })]);
  });

  test('the operation key, arguments hash and fence reach the server in _meta["dev.ledgerloop/operation"]', () => {
    const [call] = result.calls;
    const view = ledger.projection.calls[call!.logicalCallId]!;
    const seen = metaSeen('put_record');
    expect(seen).toHaveLength(2);
    for (const m of seen) expect(m).toMatchObject({ key: call!.operationKey, argumentsHash: view.argumentsHash });
    expect(typeof seen[0]!.fence).toBe('number');
    expect(seen[1]!.fence as number).toBeGreaterThan(seen[0]!.fence as number);
    expect(seen[1]!.intentAt).toBe(seen[0]!.intentAt);
    // The tool with no annotations carried its key too: the server could have deduplicated, it did not.
    expect(metaSeen('append_note')).toEqual([
      expect.objectContaining({ key: expect.stringMatching(/^op_/), argumentsHash: expect.any(String) }),
    ]);
  });
});

describe('a delayed MCP call (the fault harness holds the request past the attempt timeout)', () => {
  let result: AgentRunResult;
  let ledger: LedgerSnapshot;
  let seen: Array<Record<string, unknown>>;

  beforeAll(async () => {
    // The attempt's own deadline (toolAttemptMs 2 s) ends the wait long before the request reaches the server.
    const handle = await start('put-record', { id: 'slow', value: 'late' }, 60_000, { toolAttemptMs: 2_000 });
    result = (await handle.result()) as AgentRunResult;
    ledger = await readLedger(handle);
    const key = result.calls[0]?.operationKey;
    // The held request reaches the server after the run settled: wait for it there.
    seen = await poll(async () => {
      const mine = metaSeen('put_record').filter((m) => m['key'] === key);
      return mine.length === 2 ? mine : undefined;
    });
  });

  test('the timed-out call is resent under its key, and the held original, arriving late, adds no second effect', () => {
    expect(result.stopReason).toBe('completed');
    const [call] = result.calls;
    expect(call).toMatchObject({ toolName: 'keyed_put_record', state: 'SUCCEEDED' });
    expect(ledger.projection.calls[call!.logicalCallId]).toMatchObject({ dispatches: 1, attempts: 2 });
    // Both requests reached the server, each with its attempt's fence: the held original and the resend.
    expect(new Set(seen.map((m) => m['fence'])).size).toBe(2);
    const effects = lines(path.join(store, 'effects.jsonl')).filter((l) => l.includes(call!.operationKey!));
    expect(effects).toEqual([JSON.stringify({ key: call!.operationKey, id: 'slow' })]);
  });
});
