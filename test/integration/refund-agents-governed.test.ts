/**
 * examples/refund-ai-sdk's governed OpenAI Agents agent: `Agent` and `Runner.run` from `@openai/agents-core` in the
 * workflow, the scripted Agents model as the model activity (`OpenAIAgentsPlugin`), and the refund tool through
 * `governedAgentTools` (`LedgerloopPlugin({ ownWorkflows: true })`: the payments service's HTTP API, its own SQLite
 * storage). Every workflow task replays the history from the start (`maxCachedWorkflows: 0`), so each property
 * also holds under replay.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { generateSigningKey } from '../../src/capability/capability-keys';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { startPaymentsService, type PaymentsService } from '../../examples/refund-ai-sdk/src/payments/payments-service';
import { scriptedAgentsProvider } from '../../examples/refund-ai-sdk/src/agents/scripted-agents-model';
import { createGovernedAgentsRefundWorker } from '../../examples/refund-ai-sdk/src/agents-governed/worker';
import type { governedAgentsRefundAgent } from '../../examples/refund-ai-sdk/src/agents-governed/workflows';
import { ledgerQuery, pendingApprovalsQuery } from '../../workflows/definitions';
import type { GovernedResult } from '../../workflows/session/tool-result';
import { quietRuntime, taskQueue } from '../helpers/stack';
import { approve, eventTypes, pendingApproval, startRefund, type RefundRunner } from '../support/governed-refund-run';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';

let payments: PaymentsService;
let issuer: DevIssuer;
let nativeConnection: NativeConnection;
let connection: Connection;
let worker: Worker;
let running: Promise<void>;
let runner: RefundRunner;

beforeAll(async () => {
  quietRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-refund-agents-governed-'));
  payments = await startPaymentsService(path.join(dir, 'payments.db'));
  for (const [orderId, amountMinor] of [
    ['ord-small', 60_00],
    ['ord-large', 250_00],
    ['ord-lost', 30_00],
    ['ord-zero', 50_00],
  ] as const)
    payments.seedOrder({ orderId, customer: 'user:alice', amountMinor, currency: 'EUR' });
  issuer = await createDevIssuer(path.join(dir, 'identity'));
  nativeConnection = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
  const tq = taskQueue('refund-agents-governed');
  worker = await createGovernedAgentsRefundWorker({
    connection: nativeConnection,
    taskQueue: tq,
    paymentsUrl: payments.url,
    modelProvider: scriptedAgentsProvider,
    capabilityKey: generateSigningKey(),
    identityIssuers: [issuer.config],
    extra: { maxCachedWorkflows: 0 },
  });
  running = worker.run();
  runner = { client: new Client({ connection }), issuer, taskQueue: tq, workflowType: 'governedAgentsRefundAgent' };
}, 180_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  await payments?.close();
});

const start = (message: string) => startRefund<typeof governedAgentsRefundAgent>(runner, message);
const refundsOf = (orderId: string) => payments.refunds().filter((r) => r.orderId === orderId);

/**
 * The governed result the model read last: the scripted model quotes the tool's output item, which the Agents SDK
 * built from the JSON text the governed tool returned.
 */
function modelRead(finalOutput: string | undefined): GovernedResult {
  const quoted = (finalOutput ?? '').replace(/^refund_order said: /, '');
  const item = JSON.parse(quoted) as { type: string; text: string };
  expect(item.type).toBe('text');
  return JSON.parse(item.text) as GovernedResult;
}

test('a governed 40 EUR refund runs in the Agents run() loop, refunds once under the hash-bound key and ends completed', async () => {
  const handle = await start('refund order ord-small: 40.00 EUR, broken mug');
  const result = await handle.result();
  expect(refundsOf('ord-small')).toEqual([expect.objectContaining({ amountMinor: 40_00, currency: 'EUR' })]);
  expect(result.stopReason).toBe('completed');
  const [call] = result.calls;
  // The model read the governed result as the tool's output (the scripted model quotes it).
  expect(modelRead(result.value)).toEqual({
    status: 'ok',
    callId: call?.logicalCallId,
    result: expect.objectContaining({ orderId: 'ord-small', amountMinor: 40_00 }),
  });
  expect(call).toEqual(expect.objectContaining({ toolName: 'refund_order', state: 'SUCCEEDED' }));
  expect(refundsOf('ord-small')[0]?.idempotencyKey).toBe(call?.operationKey);
  const snap = await handle.query(ledgerQuery);
  expect(eventTypes(snap)).toEqual(
    expect.arrayContaining(['RunCreated', 'ArgumentsCanonicalized', 'AuthorizationAllowed', 'ToolResultRecorded']),
  );
  // The Agents call id is recorded as the provider's call id beside the logical call id.
  expect(JSON.stringify(snap.events)).toContain('"providerCallId":"call-2"');
  expect(eventTypes(snap).at(-1)).toBe('RunCompleted');
}, 120_000);

test('a lost refund response in the Agents loop is UNKNOWN, reconciled by key, and the payments service holds one refund', async () => {
  payments.loseNextResponses(1);
  const before = payments.refundRequests();
  const handle = await start('refund order ord-lost: 25.00 EUR, late');
  const result = await handle.result();
  expect(payments.refundRequests() - before).toBeGreaterThanOrEqual(1);
  expect(refundsOf('ord-lost')).toHaveLength(1);
  expect(result.stopReason).toBe('completed');
  expect(modelRead(result.value)).toEqual(expect.objectContaining({ status: 'ok' }));
  const snap = await handle.query(ledgerQuery);
  expect(eventTypes(snap)).toEqual(expect.arrayContaining(['ToolOutcomeMarkedUnknown', 'ToolEffectReconciled']));
  expect(result.calls).toEqual([expect.objectContaining({ state: 'SUCCEEDED' })]);
}, 120_000);

test('arguments the Agents SDK refuses to parse reach the session and are refused as a tool result, nothing sent', async () => {
  const before = payments.refundRequests();
  // The scripted model asks for 0 cents: the declaration's schema (positive) refuses it.
  const handle = await start('refund order ord-zero: 0.00 EUR, nothing');
  const result = await handle.result();
  expect(payments.refundRequests()).toBe(before);
  expect(refundsOf('ord-zero')).toEqual([]);
  // The session's own validation refused it, named the schema, and the loop went on to its answer.
  expect(modelRead(result.value)).toEqual(
    expect.objectContaining({
      status: 'refused',
      code: 'Proposal.SchemaViolation',
      reason: expect.stringMatching(/amountMinor/),
    }),
  );
  expect(result.stopReason).toBe('completed');
  const snap = await handle.query(ledgerQuery);
  expect(eventTypes(snap)).toContain('ProposalRejected');
  expect(eventTypes(snap)).not.toContain('AuthorizationAllowed');
}, 120_000);

test('an Agents refund over 100 EUR waits for approval: the customer approving it is refused, another approver is accepted', async () => {
  const handle = await start('refund order ord-large: 180.00 EUR, never arrived');
  const pending = await pendingApproval(handle);
  expect(refundsOf('ord-large')).toEqual([]);
  // The customer holds the approver role, and still may not approve their own refund: nothing recorded.
  const self = await approve(issuer, handle, pending, 'user:alice').catch((e: unknown) => e);
  expect(self).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(String((self as WorkflowUpdateFailedError).cause?.message)).toMatch(/own|principal/);
  expect(await handle.query(pendingApprovalsQuery)).toHaveLength(1);
  expect(refundsOf('ord-large')).toEqual([]);
  // Control: another verified approver is accepted, and the refund is issued once.
  await expect(approve(issuer, handle, pending, 'manager:bob')).resolves.toEqual(
    expect.objectContaining({ accepted: true, approver: 'manager:bob' }),
  );
  const result = await handle.result();
  expect(result.stopReason).toBe('completed');
  expect(refundsOf('ord-large')).toEqual([expect.objectContaining({ amountMinor: 180_00 })]);
}, 120_000);
