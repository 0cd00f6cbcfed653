/**
 * Strict codec mode on a real dev server (LEDGERLOOP_CODEC_STRICT=1): a worker whose codec is strict runs encrypted
 * runs as usual, and a run started with a PLAINTEXT input (a client without the keys, as the Web UI or the CLI
 * would start one) never reaches the run's logic: the worker's message guard (src/codec/message-guard.ts) hands the
 * workflow an undecodable marker, and the run fails at once with a typed failure (`Run.InputInvalid`, "could not be
 * decoded (plaintext-refused)"). No workflow task fails, nothing is scheduled, and the worker stays up.
 */
import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { Failure } from '../../src/domain/failures';
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

test('a plaintext input fails the run with a typed failure, no workflow task fails, nothing is scheduled', async () => {
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
  // The plain client reads the failure: its message is not a payload, so not encrypted.
  const outcome = await worker.runUntil(
    handle.result().then(
      () => undefined,
      (err: unknown) => err,
    ),
  );
  expect(worker.getState()).toBe('STOPPED'); // stopped by runUntil, not by a crash
  expect(outcome).toBeInstanceOf(WorkflowFailedError);
  const cause = (outcome as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(Failure.RunInputInvalid);
  expect(cause?.message).toMatch(/could not be decoded by this worker \(plaintext-refused\)/);
  const types = ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
  expect(types).not.toContain(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
  // The workflow code never reached the run: no activity (no model call, no dispatch).
  expect(types).not.toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  expect(types).toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
});
