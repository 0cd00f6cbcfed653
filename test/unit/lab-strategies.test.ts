/**
 * The naive loop (`blind_retry`) is not part of the runtime: only a process or a bundle that loads the lab's
 * strategies serves it (lab/strategies/). Without them, a run that names it is refused where it enters, typed,
 * with nothing sent or started: the dispatch activity (Strategy.Forbidden), the client (StrategyForbiddenError)
 * and `ledgerloop start` (exit 2). Each refusal has its positive control: with the lab loaded, the same request is
 * served. The lab is loaded in an isolated module registry, so this file's own runtime stays the product's.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { walletDebitRequest } from '../helpers/dispatch-request';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { createActivities } from '../../activities';
import { registerRunCommands, type CommandIO } from '../../cli/commands';
import { startAgentRun, StrategyForbiddenError } from '../../host/client/runs';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { classifyDispatchFailure, Failure, NON_RETRYABLE_DISPATCH } from '../../src/domain/failures';
import { isServedStrategy, strategyNames } from '../../src/domain/retry-strategies';
import type { AgentRunInput, RetryStrategy } from '../../src/domain/run';
import type { DownstreamClient } from '../../src/downstream/client';
import { TS_LOADER } from '../../src/package-paths';

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

type Create = typeof createActivities;

/** The runtime as a lab process has it: its own module registry, with lab/strategies loaded. */
function labRuntime(): { createActivities: Create; startAgentRun: typeof startAgentRun; served: readonly string[] } {
  let loaded: ReturnType<typeof labRuntime> | undefined;
  jest.isolateModules(() => {
    /* eslint-disable @typescript-eslint/no-require-imports -- a second registry, on purpose */
    require('../../lab/strategies');
    const activities = require('../../activities') as typeof import('../../activities');
    const runs = require('../../host/client/runs') as typeof import('../../host/client/runs');
    const domain = require('../../src/domain/retry-strategies') as typeof import('../../src/domain/retry-strategies');
    /* eslint-enable @typescript-eslint/no-require-imports */
    loaded = {
      createActivities: activities.createActivities,
      startAgentRun: runs.startAgentRun,
      served: domain.strategyNames(),
    };
  });
  return loaded!;
}

async function dispatch(strategy: RetryStrategy, attempt = 1, create: Create = createActivities) {
  const wallet = recordingWallet();
  const { dispatchTool } = create({ services: { wallet: wallet.client }, workerIdentity: 'unit-worker' });
  const env = new MockActivityEnvironment({ attempt });
  const outcome = await env.run(dispatchTool, request(strategy)).then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error as { type?: string; nonRetryable?: boolean } }),
  );
  return { ...outcome, calls: wallet.calls };
}

test("the runtime serves its two strategies and nothing else; the lab's registry adds blind_retry", () => {
  expect(strategyNames()).toEqual(['check_receipt', 'same_key_replay']);
  expect(isServedStrategy('blind_retry')).toBe(false);
  expect(labRuntime().served).toEqual(['check_receipt', 'same_key_replay', 'blind_retry']);
});

describe('the dispatch activity of the runtime', () => {
  test.each([1, 3])(
    'refuses blind_retry (attempt %d) with a non-retryable Strategy.Forbidden, sending nothing',
    async (attempt) => {
      const r = await dispatch('blind_retry', attempt);
      expect(r).toMatchObject({ error: { type: Failure.StrategyForbidden, nonRetryable: true } });
      expect(r.calls).toEqual([]); // the downstream client was never called
    },
  );

  test('refuses any other name it does not serve the same way', async () => {
    const r = await dispatch('made_up' as RetryStrategy);
    expect(r).toMatchObject({ error: { type: Failure.StrategyForbidden, nonRetryable: true } });
    expect(r.calls).toEqual([]);
  });

  test('serves the safe strategies', async () => {
    for (const strategy of ['same_key_replay', 'check_receipt'] as const) {
      const r = await dispatch(strategy);
      expect(r).toMatchObject({ value: { outcome: 'succeeded', keyUsed: request('same_key_replay').keyUsed } });
      expect(r.calls).toEqual(['send']);
    }
  });
});

test('with the lab loaded, the dispatch serves blind_retry: a retry sends again under a fresh key', async () => {
  const r = await dispatch('blind_retry', 2, labRuntime().createActivities);
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
      ApplicationFailure.create({ type: Failure.StrategyForbidden, message: 'not served' }),
    ),
  );
  expect(v).toMatchObject({ state: 'FAILED', code: Failure.StrategyForbidden });
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

  test('refuses blind_retry: a typed error naming what it serves, nothing started', async () => {
    const { start, client } = fakeClient();
    const refused = startAgentRun(client, { workflowId: 'wf', taskQueue: 'q', input: input('blind_retry') });
    await expect(refused).rejects.toBeInstanceOf(StrategyForbiddenError);
    await expect(refused).rejects.toMatchObject({ type: Failure.StrategyForbidden, strategy: 'blind_retry' });
    await expect(refused).rejects.toThrow('not one of check_receipt, same_key_replay');
    expect(start).not.toHaveBeenCalled();
  });

  test('starts the safe strategies for anyone, and blind_retry for a process that loaded the lab', async () => {
    const { start, client } = fakeClient();
    await startAgentRun(client, { workflowId: 'wf2', taskQueue: 'q', input: input('check_receipt') });
    await labRuntime().startAgentRun(client, { workflowId: 'wf', taskQueue: 'q', input: input('blind_retry') });
    expect(start).toHaveBeenCalledTimes(2);
  });
});

test('ledgerloop start refuses blind_retry: one line, exit 2, no server contacted', async () => {
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
  expect(err).toMatch(
    /^ledgerloop start: --strategy: unknown strategy "blind_retry" \(one of check_receipt, same_key_replay\)/,
  );
  expect(err.trimEnd().split('\n')).toHaveLength(1);
});

describe('the ledgerloop CLI as a process', () => {
  const ROOT = path.join(__dirname, '..', '..');
  const start = (preload: readonly string[]) =>
    spawnSync(
      process.execPath,
      [
        '-r',
        TS_LOADER,
        ...preload.flatMap((m) => ['-r', m]),
        path.join(ROOT, 'cli/main.ts'),
        'start',
        '--scenario',
        'wallet-debit',
        '--strategy',
        'blind_retry',
        '--address',
        '127.0.0.1:9',
      ],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LEDGERLOOP_IDENTITY_TOKEN: '' } },
    );

  test('loads no lab strategy: it refuses blind_retry at parse, before contacting the server', () => {
    const out = start([]);
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/--strategy: unknown strategy "blind_retry" \(one of check_receipt, same_key_replay\)/);
  });

  test('positive control: with the lab preloaded, the same command gets past the strategy to the server', () => {
    const out = start([path.join(ROOT, 'lab/strategies/index.ts')]);
    expect(out.stderr).not.toMatch(/unknown strategy/);
    expect(out.status).toBe(3); // 127.0.0.1:9 does not answer
  });
});
