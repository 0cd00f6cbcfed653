/**
 * examples/ticketing end to end, as its README runs it: the user's ticketing service as its own process (built on
 * ledgerloop/services), the user's worker (createWorker with the user's tools module, policy and scripted model)
 * whose workflow bundle carries the user's declarations, and a governed run that opens a ticket. The ledger says
 * SUCCEEDED and the service's own database holds one effect under the key. Then what the service refuses: the
 * same key with other arguments, and a request without a capability, each with no new effect.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { hashCanonical } from '../../src/domain/canonical';
import { signCapability } from '../../src/capability/capability';
import { createProjectKeys, type ProjectKeys } from '../../examples/ticketing/src/keys';
import { runTicket, type TicketRun } from '../../examples/ticketing/src/start-run';
import { startTicketingWorker } from '../../examples/ticketing/src/worker';
import { readPolicy, TOOLS_MODULE } from '../../examples/ticketing/src/project';
import { replayHistory } from '../../host/worker/replay';
import { ReplayToolsMissingError } from '../../host/client/history-tools';
import { ticketingScenarios } from '../../examples/ticketing/src/scenarios';
import { createWorker } from '../../host/worker/create-worker';
import { scriptedModel } from '../../src/planner/scripted-model';
import { quietRuntime, taskQueue } from '../helpers/stack';

const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'ticketing');
const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const ADMIN_TOKEN = randomBytes(24).toString('hex');

interface Ready {
  readonly url: string;
  readonly adminUrl: string;
}

/** Starts the example's service process (`npm run service` does the same) and reads its ready line. */
function startServiceProcess(dir: string, keys: ProjectKeys): Promise<{ proc: ChildProcess; ready: Ready }> {
  const proc = spawn(
    process.execPath,
    [
      '-r',
      'tsx/cjs',
      'src/service/main.ts',
      '--db',
      path.join(dir, 'ticketing.db'),
      '--port',
      '0',
      '--admin-port',
      '0',
    ],
    {
      cwd: EXAMPLE,
      env: { ...process.env, LEDGERLOOP_CAPABILITY_KEYS: keys.jwks, LEDGERLOOP_ADMIN_TOKEN: ADMIN_TOKEN },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.once('line', (line) => resolve({ proc, ready: JSON.parse(line) as Ready }));
    proc.once('exit', (code) => reject(new Error(`the ticketing service exited with ${code}`)));
  });
}

let dir: string;
let keys: ProjectKeys;
let service: { proc: ChildProcess; ready: Ready };
let worker: Worker;
let workerConnection: NativeConnection;
let connection: Connection;
let client: Client;
let tq: string;
let workerDone: Promise<void>;

async function stats(key: string, prefix = false): Promise<{ dispatchCount: number; businessEffectCount: number }> {
  const res = await fetch(`${service.ready.adminUrl}/admin/stats?key=${key}&prefix=${prefix}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return (await res.json()) as { dispatchCount: number; businessEffectCount: number };
}

/** A request to POST /v1/tickets as any client of the HTTP contract sends it (docs/services.md). */
/** A capability for one request, signed with the worker's key (what the dispatch activity does at each attempt). */
function capabilityFor(key: string, argumentsHash: string, scope: string): string {
  const nowMs = Date.now();
  return signCapability(
    {
      operationKey: key,
      keyMode: 'exact',
      argumentsHash,
      tenant: 'acme',
      principalId: 'user:alice',
      scope,
      action: scope,
      resource: 'acme/project/ops',
      policyVersion: 'ticketing-example/1',
      expiresAt: new Date(nowMs + 60_000).toISOString(),
    },
    keys.capabilityKey,
    { audience: 'ticketing', nowMs },
  ).token;
}

/** GET /v1/tickets/acme/:ticketId with a read capability for exactly that record (every read is scoped). */
async function readTicket(ticketId: string): Promise<unknown> {
  const record = `/v1/tickets/acme/${ticketId}`;
  const res = await fetch(`${service.ready.url}${record}`, {
    headers: { 'x-capability': capabilityFor(record, 'read', 'read:ticketing') },
  });
  return res.json();
}

/** GET /v1/operations/:key?tenant=acme: the service's record under the key. */
async function lookup(key: string): Promise<{ status: string; fence: number; receipt?: string }> {
  const res = await fetch(`${service.ready.url}/v1/operations/${key}?tenant=acme`, {
    headers: { 'x-capability': capabilityFor(key, 'lookup', 'lookup:ticketing') },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; fence: number; receipt?: string };
}

function openRequest(key: string, body: Record<string, unknown>, capability: boolean, fence = 0): Promise<Response> {
  const argumentsHash = hashCanonical(body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'idempotency-key': key,
    'x-arguments-hash': argumentsHash,
    'x-fence': String(fence),
    'x-intent-at': new Date().toISOString(),
  };
  if (capability) headers['x-capability'] = capabilityFor(key, argumentsHash, 'ticketing.open');
  return fetch(`${service.ready.url}/v1/tickets`, { method: 'POST', headers, body: JSON.stringify(body) });
}

beforeAll(async () => {
  quietRuntime();
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-example-ticketing-'));
  keys = await createProjectKeys(path.join(dir, 'keys'));
  service = await startServiceProcess(dir, keys);
  tq = taskQueue('example-ticketing');
  // The example's own worker: its bundle is built here, with the user's tools module in the registry's place.
  ({ worker, connection: workerConnection } = await startTicketingWorker({
    ticketingUrl: service.ready.url,
    keys,
    taskQueue: tq,
    address,
    extra: { maxCachedWorkflows: 0 },
  }));
  workerDone = worker.run();
  connection = await Connection.connect({ address });
  client = new Client({ connection });
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await workerDone;
  await workerConnection?.close();
  await connection?.close();
  service?.proc.kill('SIGTERM');
});

describe('examples/ticketing', () => {
  let run: TicketRun;

  test('a governed run opens one ticket through the user tool: SUCCEEDED in the ledger, one effect at the service', async () => {
    run = await runTicket(
      client,
      keys,
      {
        project: 'ops',
        title: 'Printer  on floor 3 is jammed ',
        labels: ['printer', 'floor-3', 'printer'],
        due: { at: '2026-12-02T09:00:00+01:00', zone: 'Europe/Berlin' },
      },
      { taskQueue: tq, workflowId: `example-ticketing-${Date.now()}` },
    );
    expect(run.result.stopReason).toBe('completed');
    expect(run.result.calls).toHaveLength(1);
    const [call] = run.result.calls;
    expect(call?.toolName).toBe('ticketing_open_ticket');
    expect(call?.state).toBe('SUCCEEDED');
    expect(call?.operationKey).toMatch(/^op_[0-9a-f]{40}$/);
    expect(run.events).toEqual(
      expect.arrayContaining([
        'DispatchIntentRecorded',
        'CompensationRegistered',
        'ToolResultRecorded',
        'RunCompleted',
      ]),
    );
    expect(await stats(call!.operationKey!)).toMatchObject({ dispatchCount: 1, businessEffectCount: 1 });
    // The service holds the tool's canonical form: text normalized, labels a sorted set, the due time in UTC.
    const ticketId = call!.receipt!.replace(/^rcpt_/, '');
    const ticket = await readTicket(ticketId);
    expect(ticket).toMatchObject({
      title: 'Printer on floor 3 is jammed',
      labels: ['floor-3', 'printer'],
      due: { at: '2026-12-02T08:00:00.000Z', zone: 'Europe/Berlin' },
      status: 'open',
    });
  }, 60_000);

  test("the run's history replays against a bundle with the user tools; without them it is refused, naming the missing tool (the control)", async () => {
    await expect(
      replayHistory(run.history, { workflowId: run.workflowId, tools: TOOLS_MODULE }),
    ).resolves.toBeUndefined();
    // Before any replay: the bundle lacks the history's tool, which is named (not a determinism error).
    const refused = replayHistory(run.history, { workflowId: run.workflowId });
    await expect(refused).rejects.toBeInstanceOf(ReplayToolsMissingError);
    await expect(refused).rejects.toThrow(/ticketing_open_ticket/);
  }, 90_000);

  test('the same key replays with the same arguments and is refused with other ones or a stale fence: no second effect', async () => {
    const key = run.result.calls[0]!.operationKey!;
    // Reconciliation's view: the record is completed, under the fence of the worker's attempt.
    const record = await lookup(key);
    expect(record).toMatchObject({ status: 'completed', receipt: run.result.calls[0]!.receipt });
    const body = {
      tenant: 'acme',
      project: 'ops',
      title: 'Printer on floor 3 is jammed',
      labels: ['floor-3', 'printer'],
      due: { at: '2026-12-02T08:00:00.000Z', zone: 'Europe/Berlin' },
    };
    const replay = await openRequest(key, body, true, record.fence);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const other = await openRequest(key, { ...body, title: 'Printer on floor 4 is jammed' }, true, record.fence);
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: 'Idempotency.ArgumentsMismatch', committed: false });
    const stale = await openRequest(key, body, true, record.fence - 1);
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: 'Fence.Stale', committed: false });
    expect(await stats(key)).toMatchObject({ businessEffectCount: 1 });
  });

  test('a request without a capability is refused 403 and commits nothing (fail closed)', async () => {
    const key = `op_${'0'.repeat(40)}`;
    const res = await openRequest(key, { tenant: 'acme', project: 'ops', title: 'x', labels: [] }, false);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'Capability.Invalid', committed: false });
    expect(await stats(key)).toMatchObject({ dispatchCount: 0, businessEffectCount: 0 });
  });

  test('a failed opening in the same turn has the other one offset by the compensation, the cancel (tool_failed)', async () => {
    const pair = await runTicket(
      client,
      keys,
      { project: 'ops', title: 'Badge reader at door 2' },
      { taskQueue: tq, scenario: 'open-pair', vars: { secondProject: 'archive' } },
    );
    expect(pair.result.stopReason).toBe('tool_failed');
    expect(pair.result.calls.map((c) => [c.toolName, c.state]).sort()).toEqual(
      expect.arrayContaining([
        ['ticketing_open_ticket', 'FAILED'],
        ['ticketing_open_ticket', 'SUCCEEDED'],
      ]),
    );
    expect(pair.events).toEqual(expect.arrayContaining(['CompensationStarted', 'CompensationCompleted']));
    const opened = pair.result.calls.find((c) => c.toolName === 'ticketing_open_ticket' && c.state === 'SUCCEEDED')!;
    const ticketId = opened.receipt!.replace(/^rcpt_/, '');
    const ticket = await readTicket(ticketId);
    expect(ticket).toMatchObject({ project: 'ops', status: 'cancelled' });
    expect(await stats(opened.operationKey!)).toMatchObject({ businessEffectCount: 1 });
  }, 60_000);

  test('the control: a worker without the tools module runs the built-in tools, so the proposal is refused and nothing is sent', async () => {
    const before = await stats('', true);
    const builtinQueue = taskQueue('example-ticketing-builtin');
    const { worker: builtin, connection: builtinConnection } = await createWorker({
      services: { ticketing: service.ready.url },
      policy: readPolicy(),
      model: scriptedModel(ticketingScenarios),
      capabilityKey: keys.capabilityKey,
      identityIssuers: keys.issuers,
      taskQueue: builtinQueue,
      address,
      maxCachedWorkflows: 0,
    });
    try {
      const refused = await builtin.runUntil(
        runTicket(client, keys, { project: 'ops', title: 'Never sent' }, { taskQueue: builtinQueue }),
      );
      expect(refused.events).toContain('ProposalRejected');
      expect(refused.events).not.toContain('DispatchIntentRecorded');
      expect(refused.result.calls.filter((c) => c.state === 'SUCCEEDED')).toEqual([]);
    } finally {
      await builtinConnection.close();
    }
    expect(await stats('', true)).toEqual(before);
  }, 120_000);
});
