/**
 * examples/refund-ai-sdk's plain baseline: the refund agent on a real `@temporalio/ai-sdk` `AiSdkPlugin` worker
 * (SDK 1.24, the dev server), the user's own `generateText` with `tools` and `stopWhen`, the scripted AI SDK model
 * as the model activity, the tools as plain activities against the payments service (its own SQLite storage).
 * Every workflow task replays the history from the start (`maxCachedWorkflows: 0`), so each property below also
 * holds under replay of the AI SDK loop.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { startPaymentsService, type PaymentsService } from '../../examples/refund-ai-sdk/src/payments/payments-service';
import { scriptedRefundProvider } from '../../examples/refund-ai-sdk/src/scripted-model';
import { createRefundWorker } from '../../examples/refund-ai-sdk/src/baseline/worker';
import {
  decideRefund,
  pendingRefunds,
  type refundAgent,
  type RefundRequest,
} from '../../examples/refund-ai-sdk/src/baseline/workflows';
import { quietRuntime, taskQueue } from '../helpers/stack';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';

let payments: PaymentsService;
let nativeConnection: NativeConnection;
let connection: Connection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
let tq: string;

beforeAll(async () => {
  quietRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-refund-baseline-'));
  payments = await startPaymentsService(path.join(dir, 'payments.db'));
  for (const [orderId, amountMinor] of [
    ['ord-small', 60_00],
    ['ord-large', 250_00],
    ['ord-lost', 30_00],
    ['ord-twice', 50_00],
  ] as const)
    payments.seedOrder({ orderId, customer: 'alice', amountMinor, currency: 'EUR' });
  nativeConnection = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
  client = new Client({ connection });
  tq = taskQueue('refund-baseline');
  worker = await createRefundWorker({
    connection: nativeConnection,
    taskQueue: tq,
    paymentsUrl: payments.url,
    modelProvider: scriptedRefundProvider(),
    extra: { maxCachedWorkflows: 0 },
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  await payments?.close();
});

function start(request: RefundRequest): Promise<WorkflowHandle<typeof refundAgent>> {
  return client.workflow.start<typeof refundAgent>('refundAgent', {
    taskQueue: tq,
    workflowId: `refund-${request.message.replace(/\W+/g, '-')}-${Date.now()}`,
    args: [request],
  });
}

const refundsOf = (orderId: string) => payments.refunds().filter((r) => r.orderId === orderId);

/** Resolves once the run reports a refund waiting for `orderId` (the query is asked until it does). */
async function untilPending(handle: WorkflowHandle, orderId: string): Promise<void> {
  for (;;) {
    if ((await handle.query(pendingRefunds)).includes(orderId)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a 40 EUR refund runs the generateText loop in the workflow and refunds once; the model reads the result', async () => {
  const text = await (
    await start({ customer: 'alice', message: 'refund order ord-small: 40.00 EUR, broken mug' })
  ).result();
  expect(refundsOf('ord-small')).toEqual([
    expect.objectContaining({ amountMinor: 40_00, currency: 'EUR', idempotencyKey: 'refund-ord-small' }),
  ]);
  // The tool's result came back to the model as a tool result (the scripted model quotes it).
  expect(text).toContain('"refunded":{"refundId"');
}, 60_000);

test('a refund over 100 EUR waits for an approver; the customer approving it is refused, another approves it', async () => {
  const handle = await start({ customer: 'alice', message: 'refund order ord-large: 180.00 EUR, never arrived' });
  await untilPending(handle, 'ord-large');
  expect(refundsOf('ord-large')).toEqual([]);
  // Self-approval refused by the update's validator: nothing recorded, still waiting.
  await expect(
    handle.executeUpdate(decideRefund, { args: [{ orderId: 'ord-large', approver: 'alice', approve: true }] }),
  ).rejects.toThrow(WorkflowUpdateFailedError);
  expect(await handle.query(pendingRefunds)).toEqual(['ord-large']);
  // Control: an approver who is not the customer is accepted, and the refund is issued once.
  await expect(
    handle.executeUpdate(decideRefund, { args: [{ orderId: 'ord-large', approver: 'bob', approve: true }] }),
  ).resolves.toBe('approved');
  await handle.result();
  expect(refundsOf('ord-large')).toEqual([expect.objectContaining({ amountMinor: 180_00 })]);
}, 60_000);

test('a lost refund response is retried under the order key and the payments service holds one refund', async () => {
  payments.loseNextResponses(1);
  const before = payments.refundRequests();
  const text = await (await start({ customer: 'alice', message: 'refund order ord-lost: 25.00 EUR, late' })).result();
  // The first response was lost (so the activity was retried), and the retry got the retained refund.
  expect(payments.refundRequests() - before).toBeGreaterThanOrEqual(2);
  expect(refundsOf('ord-lost')).toHaveLength(1);
  expect(text).toContain('"refunded"');
}, 60_000);

test('a second refund of the same order is refused by its key, with no second effect', async () => {
  await (await start({ customer: 'alice', message: 'refund order ord-twice: 20.00 EUR, scratched' })).result();
  const again = await (
    await start({ customer: 'alice', message: 'refund order ord-twice: 10.00 EUR, again' })
  ).result();
  expect(again).toContain('"refused":"other parameters"');
  expect(refundsOf('ord-twice')).toEqual([expect.objectContaining({ amountMinor: 20_00 })]);
}, 60_000);
