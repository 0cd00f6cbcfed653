/**
 * A worker whose workflow bundle is the product's (no lab module) given a blind_retry run: the run's input check
 * refuses it (Run.InputInvalid) before anything runs, and the wallet never sees a request, even though this
 * process's client and activities have the lab loaded. The positive control: the same run on the stack's lab
 * bundle is served, and reaches the wallet.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { startAgentRun } from '../../host/client/runs';
import type { Stack } from '../../lab/stack';
import { Failure } from '../../src/domain/failures';
import { writeWorkflowBundle } from '../../host/worker/bundle';
import { input } from '../helpers/run';
import { inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(180_000);

let stack: Stack;
let productBundle: string;
beforeAll(async () => {
  stack = await startTestStack('lab-strategies');
  productBundle = await writeWorkflowBundle(
    path.join(mkdtempSync(path.join(os.tmpdir(), 'lab-strategies-')), 'product-bundle.js'),
  );
});
afterAll(async () => {
  await stack?.stop();
});

async function blindRetryRun(name: string, bundlePath: string | undefined) {
  const account = `acct_${name}`;
  await stack.walletClient.seedAccount({ tenant: 'acme', account, balanceMinor: 100_00, currency: 'EUR' });
  const tq = taskQueue(name);
  const worker = await inProcessWorker(stack, tq, undefined, bundlePath ? { bundlePath } : {});
  const workflowId = `${name}-${Date.now()}`;
  const outcome = await worker.runUntil(async () => {
    const handle = await startAgentRun(stack.client, {
      workflowId,
      taskQueue: tq,
      input: input({ strategy: 'blind_retry', vars: { account, amount: { minor: 1250, currency: 'EUR' } } }),
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    return handle.result().then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
  });
  return { outcome, balance: await stack.walletClient.balance('acme', account) };
}

test("the product's bundle refuses a blind_retry run at its input check: Run.InputInvalid, nothing sent", async () => {
  const { outcome, balance } = await blindRetryRun('prod-refuses', productBundle);
  expect('error' in outcome).toBe(true);
  const error = (outcome as { error: unknown }).error;
  expect(error).toBeInstanceOf(WorkflowFailedError);
  expect((error as WorkflowFailedError).cause).toMatchObject({ type: Failure.RunInputInvalid });
  expect(String((error as WorkflowFailedError).cause?.message)).toMatch(
    /at strategy: one of check_receipt, same_key_replay; nothing was run/,
  );
  expect(balance).toEqual({ minor: 100_00, currency: 'EUR' });
});

test("positive control: the stack's lab bundle serves the same run, and it reaches the wallet", async () => {
  const { outcome, balance } = await blindRetryRun('lab-serves', undefined);
  expect(outcome).toMatchObject({ result: { calls: [expect.objectContaining({ state: 'SUCCEEDED' })] } });
  expect(balance).toEqual({ minor: 100_00 - 1250, currency: 'EUR' });
});
