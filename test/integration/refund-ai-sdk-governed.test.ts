/**
 * examples/refund-ai-sdk's governed agent: the baseline's `generateText` loop on a real `AiSdkPlugin` worker with
 * `LedgerloopPlugin({ ownWorkflows: true })` beside it, the scripted AI SDK model as the model activity, and the
 * refund tool through `governedTools` (the payments service's HTTP API, its own SQLite storage). Every workflow
 * task replays the history from the start (`maxCachedWorkflows: 0`), so each property also holds under replay.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { generateSigningKey } from '../../src/capability/capability-keys';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { startPaymentsService, type PaymentsService } from '../../examples/refund-ai-sdk/src/payments/payments-service';
import { scriptedRefundProvider } from '../../examples/refund-ai-sdk/src/scripted-model';
import { createGovernedRefundWorker } from '../../examples/refund-ai-sdk/src/governed/worker';
import type { governedRefundAgent } from '../../examples/refund-ai-sdk/src/governed/workflows';
import { ledgerQuery, pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import { approve, eventTypes, pendingApproval, startRefund } from '../support/governed-refund-run';
import { quietRuntime, taskQueue } from '../helpers/stack';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const GOVERNED_FIXTURE = path.join(__dirname, '..', 'replay', 'governed', 'refund-lost-response.json');
const BIN = path.join(__dirname, '..', '..', 'bin', 'ledgerloop.cjs');

/** `ledgerloop show <id> [...flags]` against this test's server: its exit code and stdout. */
function show(id: string, ...flags: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'show', id, ...flags, '--address', address],
      { env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (err, out) => resolve({ code: err === null ? 0 : Number((err as { code?: unknown }).code ?? 1), out }),
    );
  });
}

let payments: PaymentsService;
let issuer: DevIssuer;
let nativeConnection: NativeConnection;
let connection: Connection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
let tq: string;

beforeAll(async () => {
  quietRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-refund-governed-'));
  payments = await startPaymentsService(path.join(dir, 'payments.db'));
  for (const [orderId, amountMinor] of [
    ['ord-small', 60_00],
    ['ord-large', 250_00],
    ['ord-lost', 30_00],
    ['ord-denied', 50_00],
  ] as const)
    payments.seedOrder({ orderId, customer: 'user:alice', amountMinor, currency: 'EUR' });
  issuer = await createDevIssuer(path.join(dir, 'identity'));
  nativeConnection = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
  client = new Client({ connection });
  tq = taskQueue('refund-governed');
  worker = await createGovernedRefundWorker({
    connection: nativeConnection,
    taskQueue: tq,
    paymentsUrl: payments.url,
    modelProvider: scriptedRefundProvider(),
    capabilityKey: generateSigningKey(),
    identityIssuers: [issuer.config],
    extra: { maxCachedWorkflows: 0 },
  });
  running = worker.run();
}, 180_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  await payments?.close();
});

const start = (message: string, who?: string, tokenFor?: string) =>
  startRefund<typeof governedRefundAgent>(
    { client, issuer, taskQueue: tq, workflowType: 'governedRefundAgent' },
    message,
    who,
    tokenFor,
  );
const decide = (handle: WorkflowHandle, p: PendingApproval, approver: string) => approve(issuer, handle, p, approver);
const refundsOf = (orderId: string) => payments.refunds().filter((r) => r.orderId === orderId);
const types = eventTypes;

test('a governed 40 EUR refund runs in the team generateText loop, refunds once and ends completed', async () => {
  const handle = await start('refund order ord-small: 40.00 EUR, broken mug');
  const result = await handle.result();
  expect(refundsOf('ord-small')).toEqual([expect.objectContaining({ amountMinor: 40_00, currency: 'EUR' })]);
  expect(result.stopReason).toBe('completed');
  // The model read the governed result as a tool result (the scripted model quotes it).
  expect(result.value).toContain('"status":"ok"');
  const [call] = result.calls;
  expect(call).toEqual(expect.objectContaining({ toolName: 'refund_order', state: 'SUCCEEDED' }));
  // The key the payments service holds is the one bound to the arguments' hash.
  expect(refundsOf('ord-small')[0]?.idempotencyKey).toBe(call?.operationKey);
  const snap = await handle.query(ledgerQuery);
  expect(types(snap)).toEqual(
    expect.arrayContaining(['RunCreated', 'ArgumentsCanonicalized', 'AuthorizationAllowed', 'ToolResultRecorded']),
  );
  expect(types(snap).at(-1)).toBe('RunCompleted');
}, 90_000);

test('a lost refund response is UNKNOWN, reconciled by key, and the payments service holds one refund', async () => {
  payments.loseNextResponses(1);
  const before = payments.refundRequests();
  const handle = await start('refund order ord-lost: 25.00 EUR, late');
  const result = await handle.result();
  expect(payments.refundRequests() - before).toBeGreaterThanOrEqual(1);
  expect(refundsOf('ord-lost')).toHaveLength(1);
  expect(result.stopReason).toBe('completed');
  expect(result.value).toContain('"status":"ok"');
  // The lost answer made the call UNKNOWN; the lookup by its key found the refund the service kept.
  const snap = await handle.query(ledgerQuery);
  expect(types(snap)).toEqual(expect.arrayContaining(['ToolOutcomeMarkedUnknown', 'ToolEffectReconciled']));
  expect(result.calls).toEqual([expect.objectContaining({ state: 'SUCCEEDED' })]);
  // LEDGERLOOP_RECORD_GOVERNED=1 writes this run's history as the replay tier's governed fixture
  // (test/replay/governed-replay.test.ts).
  if (process.env.LEDGERLOOP_RECORD_GOVERNED === '1')
    writeFileSync(GOVERNED_FIXTURE, historyToJSON(await handle.fetchHistory()));

  // `ledgerloop show` explains the session as it explains an agent run: the key, the UNKNOWN and its lookup, the stop.
  const key = Object.values(snap.projection.calls)[0]!.operationKey ?? '';
  expect(key).toMatch(/^op_/);
  const j = await show(handle.workflowId, '--json');
  expect(j.code).toBe(0);
  const shown = JSON.parse(j.out) as { projectionHash: string; events: { type: string }[]; calls: { state: string }[] };
  expect(shown.projectionHash).toBe(snap.projectionHash);
  expect(shown.events.map((e) => e.type)).toEqual(
    expect.arrayContaining([
      'DispatchIntentRecorded',
      'ToolOutcomeMarkedUnknown',
      'ToolEffectReconciled',
      'RunCompleted',
    ]),
  );
  expect(shown.calls).toEqual([expect.objectContaining({ state: 'SUCCEEDED', operationKey: key })]);
  const t = await show(handle.workflowId);
  expect(t.code).toBe(0);
  expect(t.out).toContain(key.slice(0, 16)); // the table shortens the key; the JSON above holds it whole
  expect(t.out).toMatch(/ToolOutcomeMarkedUnknown/);
  expect(t.out).toMatch(/ToolEffectReconciled/);
  expect(t.out).toMatch(/refund_order\s+SUCCEEDED/);
  expect(t.out).toContain('completed');
  // Control: a run that does not exist is not explained.
  expect((await show(`${handle.workflowId}-missing`, '--timeout', '5s')).code).not.toBe(0);
}, 150_000);

test('a refund over 100 EUR waits for approval: the customer approving it is refused, another approver is accepted', async () => {
  const handle = await start('refund order ord-large: 180.00 EUR, never arrived');
  const pending = await pendingApproval(handle);
  expect(refundsOf('ord-large')).toEqual([]);
  // The customer holds the approver role, and still may not approve their own refund: nothing recorded.
  const self = await decide(handle, pending, 'user:alice').catch((e: unknown) => e);
  expect(self).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(String((self as WorkflowUpdateFailedError).cause?.message)).toMatch(/own|principal/);
  expect(await handle.query(pendingApprovalsQuery)).toHaveLength(1);
  expect(refundsOf('ord-large')).toEqual([]);
  // Control: another verified approver is accepted, and the refund is issued once.
  await expect(decide(handle, pending, 'manager:bob')).resolves.toEqual(
    expect.objectContaining({ accepted: true, approver: 'manager:bob' }),
  );
  const result = await handle.result();
  expect(result.stopReason).toBe('completed');
  expect(refundsOf('ord-large')).toEqual([expect.objectContaining({ amountMinor: 180_00 })]);
}, 90_000);
