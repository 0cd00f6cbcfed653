/**
 * blind_retry exists only where the demo and the fault lab ask for it: a production worker's dispatch refuses it
 * before anything is sent, the client refuses to start it without `allowLabStrategies`, and `ledgerloop start`
 * refuses it without --lab.
 */
import { walletDebitRequest } from '../helpers/dispatch-request';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { createActivities } from '../../activities';
import { registerRunCommands, type CommandIO } from '../../cli/commands';
import { startAgentRun, StrategyForbiddenError } from '../../src/client/runs';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { classifyDispatchFailure, Failure, NON_RETRYABLE_DISPATCH } from '../../src/domain/failures';
import type { AgentRunInput, RetryStrategy } from '../../src/domain/run';
import type { DownstreamClient } from '../../src/downstream/client';
import { labStrategiesFromEnv } from '../../src/worker/worker';

/** A downstream that records every call; nothing here reaches a network. */
function recordingWallet() {
  const calls: string[] = [];
  const wallet = {
    send: jest.fn(async () => {
      calls.push('send');
      return { kind: 'ok', status: 201, body: { receipt: 'rcpt_1' }, replayed: false };
    }),
    lookup: jest.fn(async () => {
      calls.push('lookup');
      return { kind: 'not_found', sealed: false };
    }),
    contract: jest.fn(async () => {
      calls.push('contract');
      return { idempotencyRetentionMs: 86_400_000 };
    }),
  };
  return { calls, client: wallet as unknown as DownstreamClient };
}

function request(strategy: RetryStrategy): DispatchRequest {
  return walletDebitRequest(1250, { strategy });
}

async function dispatch(strategy: RetryStrategy, allowLabStrategies: boolean | undefined, attempt = 1) {
  const wallet = recordingWallet();
  const { dispatchTool } = createActivities({
    services: { wallet: wallet.client },
    workerIdentity: 'unit-worker',
    ...(allowLabStrategies !== undefined ? { allowLabStrategies } : {}),
  });
  const env = new MockActivityEnvironment({ attempt });
  const outcome = await env.run(dispatchTool, request(strategy)).then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error as { type?: string; nonRetryable?: boolean } }),
  );
  return { ...outcome, calls: wallet.calls };
}

describe('the dispatch activity of a production worker (allowLabStrategies unset or false)', () => {
  test.each([
    ['unset', undefined, 1],
    ['false', false, 1],
    ['false, a later Temporal attempt', false, 3],
  ] as const)(
    'refuses blind_retry (%s) with a non-retryable Strategy.Forbidden and sends nothing',
    async (_n, allow, attempt) => {
      const r = await dispatch('blind_retry', allow, attempt);
      expect(r).toMatchObject({ error: { type: Failure.StrategyForbidden, nonRetryable: true } });
      expect(r.calls).toEqual([]); // the downstream client was never called
    },
  );

  test('still serves the safe strategies', async () => {
    for (const strategy of ['same_key_replay', 'check_receipt'] as const) {
      const r = await dispatch(strategy, false);
      expect(r).toMatchObject({ value: { outcome: 'succeeded', keyUsed: request('same_key_replay').keyUsed } });
      expect(r.calls).toEqual(['send']);
    }
  });
});

test('a lab worker (the demo, the fault lab, the tests) serves blind_retry: a retry sends again under a fresh key', async () => {
  const r = await dispatch('blind_retry', true, 2);
  expect(r).toMatchObject({ value: { outcome: 'succeeded', keyUsed: `${request('blind_retry').keyUsed}~a2` } });
  expect(r.calls).toEqual(['send']);
});

test('the workflow reads Strategy.Forbidden as proven no effect (FAILED), and Temporal does not retry it', () => {
  expect(NON_RETRYABLE_DISPATCH).toContain(Failure.StrategyForbidden);
  const v = classifyDispatchFailure(
    new ActivityFailure(
      'activity failed',
      'dispatchTool',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      'lab-test',
      ApplicationFailure.create({ type: Failure.StrategyForbidden, message: 'lab-only' }),
    ),
  );
  expect(v).toMatchObject({ state: 'FAILED', code: Failure.StrategyForbidden });
});

test('the worker process allows lab strategies only with LEDGERLOOP_ALLOW_LAB_STRATEGIES=1', () => {
  expect(labStrategiesFromEnv({})).toBe(false);
  expect(labStrategiesFromEnv({ LEDGERLOOP_ALLOW_LAB_STRATEGIES: 'true' })).toBe(false);
  expect(labStrategiesFromEnv({ LEDGERLOOP_ALLOW_LAB_STRATEGIES: '0' })).toBe(false);
  expect(labStrategiesFromEnv({ LEDGERLOOP_ALLOW_LAB_STRATEGIES: '1' })).toBe(true);
});

describe('startAgentRun', () => {
  const input = (strategy: RetryStrategy): AgentRunInput => ({
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'Charge 12.50 EUR for order 1001',
    strategy,
    planner: { kind: 'scripted', scenario: 'wallet-debit', vars: {} },
    deadlineAt: new Date(Date.now() + 60_000).toISOString(),
  });
  const fakeClient = () => {
    const start = jest.fn(async () => ({ workflowId: 'wf', firstExecutionRunId: 'run' }));
    return { start, client: { workflow: { start } } as unknown as Client };
  };

  test('refuses blind_retry without allowLabStrategies: a typed error, nothing started', async () => {
    const { start, client } = fakeClient();
    const refused = startAgentRun(client, { workflowId: 'wf', taskQueue: 'q', input: input('blind_retry') });
    await expect(refused).rejects.toBeInstanceOf(StrategyForbiddenError);
    await expect(refused).rejects.toMatchObject({ type: Failure.StrategyForbidden, strategy: 'blind_retry' });
    expect(start).not.toHaveBeenCalled();
  });

  test('starts blind_retry for a lab caller, and the safe strategies for anyone', async () => {
    const { start, client } = fakeClient();
    await startAgentRun(client, {
      workflowId: 'wf',
      taskQueue: 'q',
      input: input('blind_retry'),
      allowLabStrategies: true,
    });
    await startAgentRun(client, { workflowId: 'wf2', taskQueue: 'q', input: input('check_receipt') });
    expect(start).toHaveBeenCalledTimes(2);
  });
});

test('ledgerloop start refuses blind_retry without --lab: one line, exit 2, no server contacted', async () => {
  let err = '';
  let code: number | undefined;
  const io: CommandIO = {
    out: () => {},
    err: { write: (s: string) => (err += s), isTTY: false },
    exit: (c) => {
      throw Object.assign(new Error('exit'), { code: c });
    },
    setExitCode: (c) => {
      code = c;
    },
  };
  const program = registerRunCommands(new Command('ledgerloop'), io);
  // An address nothing listens on: a refusal that came after connecting would print "unreachable" (exit 3).
  await program
    .parseAsync(['start', '--scenario', 'wallet-debit', '--strategy', 'blind_retry', '--address', '127.0.0.1:9'], {
      from: 'user',
    })
    .catch((e: { code?: number }) => (code = e.code));
  expect(code).toBe(2);
  expect(err).toMatch(/^ledgerloop start: strategy blind_retry is lab-only.*--lab/);
  expect(err.trimEnd().split('\n')).toHaveLength(1);
});
