/**
 * Structured logs (src/observability/logger.ts, src/domain/ledger-log.ts): a worker process at
 * LEDGERLOOP_LOG_LEVEL=info writes one JSON line per step an operator follows a call by, each carrying the run's ids
 * (the SDK's) and the call id and operation key (Ledgerloop's). The worker replays every workflow task
 * (maxCachedWorkflows 0), and still writes each workflow line once. No key or token reaches the log.
 */
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { Stack } from '../../lab/stack';
import { spawnWorker, type WorkerProcess } from '../../lab/spawn-worker';
import { input } from '../helpers/run';
import { startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(120_000);

let stack: Stack;
let worker: WorkerProcess | undefined;
let stderr = '';
const queue = taskQueue('structured-logs');

beforeAll(async () => {
  stack = await startTestStack('structured-logs');
  worker = await spawnWorker({
    address: stack.server.address,
    taskQueue: queue,
    services: { ...stack.serviceUrls },
    workflowBundlePath: stack.bundlePath,
    maxCachedWorkflows: 0,
    env: { ...stack.workerEnv, LEDGERLOOP_LOG_LEVEL: 'info', LEDGERLOOP_LOG_FORMAT: 'json' },
  });
  worker.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
});
afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

type Line = Record<string, unknown>;
const lines = (): Line[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

test('a debit leaves intent, attempt, settlement and stop lines, each with the run and the call', async () => {
  const account = `acct_logs_${Date.now()}`;
  await stack.walletClient.seedAccount({ tenant: 'acme', account, balanceMinor: 10_000, currency: 'EUR' });
  const workflowId = `${queue}-run`;
  const identityToken = await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme');
  const handle = await startAgentRun(stack.client, {
    workflowId,
    taskQueue: queue,
    identityToken,
    input: input({ vars: { account, amount: { minor: 1250, currency: 'EUR' } } }),
  });
  const result = await handle.result();
  expect(result.stopReason).toBe('completed');
  const ledger = await readLedger(handle);
  const intent = ledger.events.find((e) => e.type === 'DispatchIntentRecorded');
  if (intent?.type !== 'DispatchIntentRecorded') throw new Error('no intent in the ledger');
  const { logicalCallId: callId, operationKey } = intent.intent;

  // The workflow's last lines reach stderr after its last task: wait for the stop line.
  const end = Date.now() + 10_000;
  while (!lines().some((l) => l.msg === 'run stopped' && l.workflowId === workflowId) && Date.now() < end)
    await new Promise((r) => setTimeout(r, 100));

  const ofRun = lines().filter((l) => l.workflowId === workflowId);
  const one = (msg: string): Line => {
    const found = ofRun.filter((l) => l.msg === msg);
    expect({ msg, count: found.length }).toEqual({ msg, count: 1 }); // once, although every task replayed
    return found[0]!;
  };
  expect(one('intent recorded')).toMatchObject({
    level: 'INFO',
    component: 'worker',
    callId,
    operationKey,
    toolName: 'wallet_debit',
    workflowType: 'agentRun',
    taskQueue: queue,
  });
  expect(one('dispatch attempt')).toMatchObject({ callId, operationKey, activityType: 'dispatchTool', attempt: 1 });
  expect(one('call settled')).toMatchObject({ callId, operationKey, status: 'SUCCEEDED' });
  expect(one('run stopped')).toMatchObject({ stopReason: 'completed' });

  // No secret reaches the log: the worker's signing key, the run's identity token.
  const signingKey = stack.workerEnv.LEDGERLOOP_CAPABILITY_SIGNING_KEY ?? '';
  const privatePart = /"d":"([^"]+)"/.exec(signingKey)?.[1];
  expect(privatePart).toBeDefined(); // the check below can fail only if we know the secret
  expect(stderr).not.toContain(privatePart!);
  expect(stderr).not.toContain(identityToken);
});
