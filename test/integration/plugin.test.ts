/**
 * `LedgerloopPlugin` joined to a team's own `Worker.create` and `Client` (host/worker/plugin.ts), on the real dev
 * server with examples/ticketing's tools, service, policy and keys:
 * - the worker serves a governed run, and keeps the team's own activities beside the runtime's;
 * - with the plugin's codec keys the run's input (the identity token) and the tool's arguments are encrypted in
 *   history, and a client with the same plugin reads the result;
 * - under strict, a worker or client without keys is refused before anything starts (PayloadsInClearError), while
 *   the same strict plugin with keys is the run above (the positive control);
 * - on a fresh namespace the worker registers Ledgerloop's search attributes itself (control: opted out, it does
 *   not), so the first run does not fail INVALID_ARGUMENT.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { RunningService } from '../../services/service-host';
import { keySetFromJwks } from '../../src/capability/capability-keys';
import { generateCodecKeys } from '../../src/codec/data-converter';
import { PayloadsInClearError } from '../../host/client/token-transport';
import { LedgerloopPlugin, WorkerConfigError, type LedgerloopPluginOptions } from '../../host/worker/plugin';
import { scriptedModel } from '../../src/planner/scripted-model';
import { createProjectKeys, type ProjectKeys } from '../../examples/ticketing/src/keys';
import { startTicketingService } from '../../examples/ticketing/src/service/ticketing-service';
import { readPolicy, TOOLS_MODULE } from '../../examples/ticketing/src/project';
import { ticketingScenarios } from '../../examples/ticketing/src/scenarios';
import { runTicket } from '../../examples/ticketing/src/start-run';
import { quietRuntime, taskQueue } from '../helpers/stack';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';

let dir: string;
let keys: ProjectKeys;
let service: RunningService;
let nativeConnection: NativeConnection;
let connection: Connection;

function pluginOptions(extra: Partial<LedgerloopPluginOptions> = {}): LedgerloopPluginOptions {
  return {
    tools: TOOLS_MODULE,
    services: { ticketing: service.url },
    policy: readPolicy(),
    model: scriptedModel(ticketingScenarios),
    capabilityKey: keys.capabilityKey,
    identityIssuers: keys.issuers,
    ...extra,
  };
}

beforeAll(async () => {
  quietRuntime();
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-plugin-'));
  keys = await createProjectKeys(path.join(dir, 'keys'));
  service = await startTicketingService({
    dbPath: path.join(dir, 'ticketing.db'),
    capabilityKeys: keySetFromJwks(keys.jwks),
  });
  nativeConnection = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
}, 60_000);

afterAll(async () => {
  await connection?.close();
  await nativeConnection?.close();
  await service?.close();
});

test("a team's Worker.create and Client with the plugin run a governed call, encrypted in history", async () => {
  const tq = taskQueue('plugin');
  const plugin = new LedgerloopPlugin(pluginOptions({ codecKeys: generateCodecKeys('team').keys, strict: true }));
  const teamActivity = async (): Promise<string> => 'pong';
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: tq,
    activities: { teamPing: teamActivity },
    plugins: [plugin],
  });
  const client = new Client({ connection, plugins: [plugin] });
  const run = await worker.runUntil(
    runTicket(client, keys, { project: 'ops', title: 'Projector in room 2' }, { taskQueue: tq }),
  );
  expect(run.result.stopReason).toBe('completed');
  // The team's activity stays beside the runtime's (the compiled options hold them by name).
  expect([...worker.options.activities.keys()]).toEqual(
    expect.arrayContaining(['teamPing', 'dispatchTool', 'planTurn']),
  );
  expect(run.events).toContain('ToolResultRecorded');
  // Encrypted in history: the run's input (with its identity token) and every activity's arguments.
  const started = run.history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const scheduled = (run.history.events ?? []).flatMap(
    (e) => e.activityTaskScheduledEventAttributes?.input?.payloads ?? [],
  );
  const encodings = [...started, ...scheduled].map((p) => Buffer.from(p.metadata?.['encoding'] ?? []).toString());
  expect(scheduled.length).toBeGreaterThan(0);
  expect(new Set(encodings)).toEqual(new Set(['binary/encrypted']));
}, 120_000);

test('under strict, a worker or a client without codec keys is refused before anything starts', async () => {
  const strict = new LedgerloopPlugin(pluginOptions({ strict: true }));
  await expect(
    Worker.create({ connection: nativeConnection, taskQueue: taskQueue('plugin-strict'), plugins: [strict] }),
  ).rejects.toThrow(PayloadsInClearError);
  expect(() => new Client({ connection, plugins: [strict] })).toThrow(PayloadsInClearError);
  // Control: the same strict plugin with keys configures both (the run above ran with one).
  const withKeys = new LedgerloopPlugin(pluginOptions({ strict: true, codecKeys: generateCodecKeys('k').keys }));
  expect(() => new Client({ connection, plugins: [withKeys] })).not.toThrow();
});

test('bad options are refused when the plugin is made, naming what is wrong', () => {
  expect(() => new LedgerloopPlugin(pluginOptions({ policy: { version: '' } as never }))).toThrow(WorkerConfigError);
  expect(() => new LedgerloopPlugin(pluginOptions({ model: [] }))).toThrow(/model is required/);
  expect(() => new LedgerloopPlugin(pluginOptions({ capabilityKey: undefined as never }))).toThrow(
    /capabilityKey is required/,
  );
  expect(() => new LedgerloopPlugin(pluginOptions({ codecKeys: 'not a key' }))).toThrow(/kid:base64/);
  // Control: the same options, unbroken, make a plugin.
  expect(new LedgerloopPlugin(pluginOptions()).name).toBe('ledgerloop');
});

/** A namespace of its own on the dev server, with none of Ledgerloop's search attributes. */
async function freshNamespace(): Promise<string> {
  const namespace = `ll-fresh-${process.pid}-${Date.now()}`;
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
  for (;;) {
    try {
      await connection.workflowService.describeNamespace({ namespace });
      return namespace;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const listed = async (namespace: string): Promise<string[]> =>
  Object.keys((await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {});

test('on a fresh namespace the plugin registers its search attributes, and the first governed run completes', async () => {
  const namespace = await freshNamespace();
  expect(await listed(namespace)).not.toContain('LedgerloopStatus');
  const plugin = new LedgerloopPlugin(pluginOptions());
  const tq = taskQueue('plugin-fresh-ns');
  const worker = await Worker.create({ connection: nativeConnection, namespace, taskQueue: tq, plugins: [plugin] });
  expect(await listed(namespace)).toEqual(
    expect.arrayContaining(['LedgerloopStatus', 'LedgerloopTenant', 'LedgerloopUnknownCalls']),
  );
  const client = new Client({ connection, namespace, plugins: [plugin] });
  const run = await worker.runUntil(
    runTicket(client, keys, { project: 'ops', title: 'Fresh room' }, { taskQueue: tq }),
  );
  expect(run.result.stopReason).toBe('completed');
}, 120_000);

test('control: with registerSearchAttributes false a fresh namespace is left without them', async () => {
  const namespace = await freshNamespace();
  const plugin = new LedgerloopPlugin(pluginOptions({ registerSearchAttributes: false }));
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace,
    taskQueue: taskQueue('plugin-no-sa'),
    plugins: [plugin],
  });
  // The worker holds the connection until it has run: run it down at once.
  await worker.runUntil(Promise.resolve());
  expect(await listed(namespace)).not.toContain('LedgerloopStatus');
}, 60_000);
