/**
 * examples/refund-ai-sdk's governed agent under a worker kill: its worker runs as its own process
 * (test/support/governed-refund-worker.ts), the refund request it sends is held on the wire in front of the payments
 * service (lab/faults/net-hold.ts), and the worker is SIGKILLed while the request is held. The held request then
 * reaches the service and commits, with no worker left to read the answer; a second worker process finishes the run.
 * What is counted is the payments service's own storage (its SQLite table of refunds).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { generateSigningKey, serializeSigningKey } from '../../src/capability/capability-keys';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { startNetHold, type NetHold } from '../../lab/faults/net-hold';
import { startPaymentsService, type PaymentsService } from '../../examples/refund-ai-sdk/src/payments/payments-service';
import type { governedRefundAgent } from '../../examples/refund-ai-sdk/src/governed/workflows';
import { ledgerQuery } from '../../workflows/definitions';
import { taskQueue } from '../helpers/stack';
import { WORKER_CONFIG_ENV, type GovernedRefundWorkerConfig } from '../support/governed-refund-worker';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const TENANT = 'acme';
const WORKER_SCRIPT = path.join(__dirname, '..', 'support', 'governed-refund-worker.ts');

let payments: PaymentsService;
let hold: NetHold;
let issuer: DevIssuer;
let connection: Connection;
let client: Client;
let config: GovernedRefundWorkerConfig;
const workers: ChildProcess[] = [];

/** How a process ended (at once if it already has). */
function exited(proc: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (proc.exitCode !== null || proc.signalCode !== null)
    return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Starts a worker process and resolves when it polls, with its pid. */
function startWorker(): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', WORKER_SCRIPT], {
    env: { ...process.env, [WORKER_CONFIG_ENV]: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  workers.push(proc);
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', () => resolve(proc));
    proc.once('exit', (code, signal) => reject(new Error(`the worker exited (${code ?? signal}) before it polled`)));
  });
}

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-refund-kill-'));
  payments = await startPaymentsService(path.join(dir, 'payments.db'));
  payments.seedOrder({ orderId: 'ord-kill', customer: 'user:alice', amountMinor: 100_00, currency: 'EUR' });
  // The first refund POST is held between the worker and the service; everything else passes.
  hold = await startNetHold(payments.url, { path: '/v1/refunds', occurrence: 1 });
  issuer = await createDevIssuer(path.join(dir, 'identity'));
  connection = await Connection.connect({ address });
  client = new Client({ connection });
  config = {
    address,
    taskQueue: taskQueue('refund-kill'),
    paymentsUrl: hold.url,
    capabilityKey: serializeSigningKey(generateSigningKey()),
    identityIssuers: [issuer.config],
  };
}, 60_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGTERM');
  await Promise.all(workers.map(exited));
  await hold?.close();
  await connection?.close();
  await payments?.close();
});

async function start(message: string): Promise<WorkflowHandle<typeof governedRefundAgent>> {
  const workflowId = `refund-kill-${Date.now()}`;
  return client.workflow.start<typeof governedRefundAgent>('governedRefundAgent', {
    taskQueue: config.taskQueue,
    workflowId,
    args: [
      {
        principal: { id: 'user:alice', tenant: TENANT },
        identityToken: await issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', TENANT),
        message,
        deadlineAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      },
    ],
  });
}

const refundsOf = (orderId: string) => payments.refunds().filter((r) => r.orderId === orderId);

test('a worker killed while the payments service holds the refund: a new worker finishes it, one refund', async () => {
  const first = await startWorker();
  const handle = await start('refund order ord-kill: 30.00 EUR, damaged');
  await hold.held;
  // The refund has left the worker and not reached the service: nothing is stored yet.
  expect(refundsOf('ord-kill')).toEqual([]);
  first.kill('SIGKILL');
  expect(await exited(first)).toEqual({ code: null, signal: 'SIGKILL' });
  // The held request now reaches the service, which commits it; the worker that would read the answer is dead.
  expect(await hold.release()).toEqual(expect.objectContaining({ status: 201 }));
  expect(refundsOf('ord-kill')).toHaveLength(1);

  const second = await startWorker();
  const result = await handle.result();
  expect(result.stopReason).toBe('completed');
  expect(result.value).toContain('"status":"ok"');
  expect(result.calls).toEqual([expect.objectContaining({ toolName: 'refund_order', state: 'SUCCEEDED' })]);
  // Exactly one refund in the service's own storage, under the key bound to the arguments' hash.
  const refunds = refundsOf('ord-kill');
  expect(refunds).toEqual([expect.objectContaining({ amountMinor: 30_00, currency: 'EUR' })]);
  expect(refunds[0]?.idempotencyKey).toBe(result.calls[0]?.operationKey);
  // The refund's dispatch was finished by the second worker process, not the killed one.
  const history = await handle.fetchHistory();
  const scheduled = history.events?.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dispatchTool',
  );
  const starts = (history.events ?? []).filter(
    (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString(),
  );
  expect(starts.at(-1)?.activityTaskStartedEventAttributes?.identity).toContain(String(second.pid));
  expect(starts.at(-1)?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
  const events = (await handle.query(ledgerQuery)).events.map((e) => e.type);
  expect(events.at(-1)).toBe('RunCompleted');

  // Control: the count can fail. The same refund sent under another key is a second refund in the same storage.
  const again = await fetch(`${payments.url}/v1/refunds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'another-key' },
    body: JSON.stringify({ orderId: 'ord-kill', amountMinor: 30_00, currency: 'EUR' }),
  });
  expect(again.status).toBe(201);
  expect(refundsOf('ord-kill')).toHaveLength(2);
}, 180_000);
