/**
 * Strict codec mode on a real dev server (LEDGERLOOP_CODEC_STRICT=1): a worker whose codec is strict runs encrypted
 * runs as usual, and a run started with a PLAINTEXT input (a client without the keys, as the Web UI or the CLI
 * would start one) never reaches the workflow code: its workflow task fails with a typed failure
 * (PayloadDecryptionError, "plaintext payload refused") that is written to the history, the run schedules nothing,
 * and the worker stays up. The task is retried by the server while the run stays open: that retry is visible
 * (the failure in the history, the attempt count in `describe`), never silent, and an operator ends it.
 */
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import type { Stack } from '../../lab/stack';
import { input, runAgent } from '../helpers/run';
import { inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(120_000);

const { keys, keyId } = generateCodecKeys('strict');
const strict = codecFromEnv({
  LEDGERLOOP_CODEC_KEYS: keys,
  LEDGERLOOP_CODEC_KEY_ID: keyId,
  LEDGERLOOP_CODEC_STRICT: '1',
})!;
const EventType = temporal.api.enums.v1.EventType;

let stack: Stack;
beforeAll(async () => {
  expect(strict.strict).toBe(true);
  stack = await startTestStack('codec-strict', { dataConverter: { payloadCodecs: [strict] } });
  await stack.walletClient.seedAccount({
    tenant: 'acme',
    account: 'acct_strict',
    balanceMinor: 10_000,
    currency: 'EUR',
  });
});
afterAll(async () => {
  await stack?.stop();
});

test('a strict worker runs an encrypted run to completion (strict mode refuses nothing the runtime writes itself)', async () => {
  const outcome = await runAgent(
    stack,
    'strict-ok',
    input({ vars: { account: 'acct_strict', amount: { minor: 1250, currency: 'EUR' } } }),
  );
  expect(outcome.result.stopReason).toBe('completed');
  expect(outcome.result.calls[0]?.state).toBe('SUCCEEDED');
});

test('a plaintext input fails the workflow task with a typed, recorded failure; nothing is scheduled; the worker stays up', async () => {
  const tq = taskQueue('strict-plain');
  const worker = await inProcessWorker(stack, tq);
  // What anyone without the keys can do: start a run with a plain JSON input.
  const plainClient = new Client({ connection: stack.connection, namespace: stack.server.namespace });
  const workflowId = `strict-plain-${Date.now()}`;
  const handle = await plainClient.workflow.start('agentRun', {
    workflowId,
    taskQueue: tq,
    args: [input({ vars: { account: 'acct_strict', amount: { minor: 1250, currency: 'EUR' } } })],
  });
  const failed = await worker.runUntil(async () => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const history = await handle.fetchHistory();
      const f = history.events?.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
      if (f) return { event: f, history };
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error('no WorkflowTaskFailed event within 30 s');
  });
  expect(worker.getState()).toBe('STOPPED'); // stopped by runUntil, not by a crash
  const failure = failed.event.workflowTaskFailedEventAttributes?.failure;
  expect(failure?.message).toMatch(/plaintext payload refused/);
  expect(failure?.message).toMatch(/LEDGERLOOP_CODEC_STRICT/);
  // A workflow task failure records the error's message and stack; the stack opens with the error's type.
  expect(failure?.stackTrace).toMatch(/^PayloadDecryptionError: plaintext payload refused/);
  // The workflow code never ran: no activity (no model call, no dispatch), no marker, no completion.
  const types = (failed.history.events ?? []).map((e) => e.eventType);
  expect(types).not.toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  // Visible, not silent: the run is open with the failed task recorded; the operator ends it.
  const description = await handle.describe();
  expect(description.status.name).toBe('RUNNING');
  await handle.terminate('plaintext input refused by the strict codec');
  expect((await handle.describe()).status.name).toBe('TERMINATED');
});
