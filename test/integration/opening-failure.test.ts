/**
 * The essay's opening failure on a real dev server with real processes: the wallet commits the debit, the
 * worker process is SIGKILLed before the activity reports, a new worker process takes over.
 */
import { Worker } from '@temporalio/worker';
import { runOpeningFailure, type DemoRow } from '../../lab/demo/opening-failure';
import type { Stack } from '../../lab/stack';
import { startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(180_000);

let stack: Stack;
const rows = new Map<string, DemoRow>();

beforeAll(async () => {
  stack = await startTestStack('opening');
});
afterAll(async () => {
  await stack?.stop();
});

describe('a worker killed after the downstream commit', () => {
  test('blind_retry really charges twice (the failure the safe strategies prevent)', async () => {
    const row = await runOpeningFailure(stack, { strategy: 'blind_retry', taskQueue: taskQueue('blind') });
    rows.set(row.strategy, row);
    expect(row.effects).toBe(2);
    expect(row.dispatches).toBe(2);
    expect(row.attempts).toBeGreaterThanOrEqual(2);
  });

  test('check_receipt reconciles by key and charges once', async () => {
    const row = await runOpeningFailure(stack, { strategy: 'check_receipt', taskQueue: taskQueue('check') });
    rows.set(row.strategy, row);
    expect(row.effects).toBe(1);
    expect(row.dispatches).toBe(1);
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    expect(row.finalState).toBe('SUCCEEDED');
  });

  test('same_key_replay gets the retained result and charges once', async () => {
    const row = await runOpeningFailure(stack, { strategy: 'same_key_replay', taskQueue: taskQueue('same') });
    rows.set(row.strategy, row);
    expect(row.effects).toBe(1);
    expect(row.dispatches).toBe(2);
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    expect(row.finalState).toBe('SUCCEEDED');
  });

  test('the new worker rebuilds the same projection hash by replay', () => {
    expect(rows.size).toBe(3);
    for (const row of rows.values()) {
      expect(row.projectionHashAfter).toMatch(/^[0-9a-f]{64}$/);
      expect(row.projectionHashAfter).toBe(row.projectionHashBefore);
    }
  });

  test('each fetched history replays without a determinism error', async () => {
    for (const row of rows.values()) {
      const history = await stack.client.workflow.getHandle(row.workflowId).fetchHistory();
      await expect(
        Worker.runReplayHistory({ workflowBundle: { codePath: stack.bundlePath } }, history, row.workflowId),
      ).resolves.toBeUndefined();
    }
  });
});
