/**
 * The model is the worker's: a run names a kind, the worker plans with the provider it was given for that kind,
 * and refuses (typed, not retried) a kind it was not given. A worker process serves the scripted model only when
 * configured (LEDGERLOOP_SCRIPTED_MODEL=1).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import type { PlanRequest, PlanResponse } from '../../src/domain/activity-contracts';
import { MISSING_MODEL, type ModelProvider } from '../../src/planner/model';
import { scriptedModel } from '../../src/planner/scripted-model';
import { modelsFromEnv } from '../../src/worker/worker';

const scriptedRequest: PlanRequest = {
  runId: 'run-model',
  turn: 1,
  goal: 'debit',
  planner: {
    kind: 'scripted',
    scenario: 'wallet-debit',
    vars: { account: 'acct_1', amount: { minor: 5, currency: 'EUR' } },
  },
  observations: [],
};

async function plan(models: readonly ModelProvider[] | undefined, req: PlanRequest) {
  const { planTurn } = createActivities({ services: {}, workerIdentity: 'model-test', ...(models ? { models } : {}) });
  return new MockActivityEnvironment({ attempt: 1 }).run(planTurn, req).then(
    (value) => ({ value: value as PlanResponse }),
    (error: unknown) => ({ error: error as { type?: string; nonRetryable?: boolean; message: string } }),
  );
}

test('a worker given the scripted model plans a scripted run with it', async () => {
  const out = await plan([scriptedModel()], scriptedRequest);
  expect('value' in out && out.value.kind === 'proposals' && out.value.proposals[0]?.name).toBe('wallet_debit');
});

test('a worker not given the scripted model refuses a scripted run: typed, not retried, naming the variable', async () => {
  const out = await plan(undefined, scriptedRequest);
  expect('error' in out).toBe(true);
  const { error } = out as { error: { type?: string; nonRetryable?: boolean; message: string } };
  expect(error.type).toBe(MISSING_MODEL);
  expect(error.nonRetryable).toBe(true);
  expect(error.message).toContain('LEDGERLOOP_SCRIPTED_MODEL=1');
});

test('an injected provider plans the runs of its kind, in place of the built-in one', async () => {
  const seen: string[] = [];
  const fake: ModelProvider = {
    kind: 'openai',
    async plan(req, { attempt }) {
      seen.push(`${req.runId}#${req.turn}`);
      return { kind: 'final', text: 'done by the injected model', attempt };
    },
  };
  const out = await plan([fake], { ...scriptedRequest, planner: { kind: 'openai', model: 'fake' } });
  expect(out).toEqual({ value: { kind: 'final', text: 'done by the injected model', attempt: 1 } });
  expect(seen).toEqual(['run-model#1']);
});

test('a worker process serves the scripted model only with LEDGERLOOP_SCRIPTED_MODEL exactly "1"', () => {
  expect(modelsFromEnv({}).map((m) => m.kind)).toEqual([]);
  expect(modelsFromEnv({ LEDGERLOOP_SCRIPTED_MODEL: 'true' }).map((m) => m.kind)).toEqual([]);
  expect(modelsFromEnv({ LEDGERLOOP_SCRIPTED_MODEL: '1' }).map((m) => m.kind)).toEqual(['scripted']);
});
