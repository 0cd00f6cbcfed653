/**
 * The model is the worker's: a run names a kind, the worker plans with the provider it was given for that kind,
 * and refuses (typed, not retried) a kind it was not given. A lab or demo worker process serves the scripted model
 * (with the lab's scenarios) only when configured (LEDGERLOOP_SCRIPTED_MODEL=1).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import type { PlanRequest, PlanResponse, PlanTurnRequest, PlanTurnResponse } from '../../src/domain/activity-contracts';
import { staticIdentitySource } from '../../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { MISSING_MODEL, type ModelProvider } from '../../src/planner/model';
import { labScriptedModel, scriptedModelsFromEnv as modelsFromEnv } from '../../lab/scenarios';
import { askedModel } from '../helpers/models';

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
  const out = await plan([labScriptedModel()], scriptedRequest);
  expect('value' in out && out.value.kind === 'proposals' && out.value.proposals[0]?.name).toBe('wallet_debit');
});

test('the scripted model refuses settings it cannot read: typed Planner.ConfigInvalid, not retried', async () => {
  for (const planner of [
    { kind: 'scripted' },
    { kind: 'scripted', scenario: '' },
    { kind: 'scripted', scenario: 'wallet-debit', vars: ['acct_1'] },
  ]) {
    const out = await plan([labScriptedModel()], { ...scriptedRequest, planner });
    const { error } = out as { error: { type?: string; nonRetryable?: boolean; message: string } };
    expect({ type: error?.type, nonRetryable: error?.nonRetryable }).toEqual({
      type: 'Planner.ConfigInvalid',
      nonRetryable: true,
    });
  }
  // The same model plans the same scenario when its settings are whole.
  const ok = await plan([labScriptedModel()], scriptedRequest);
  expect('value' in ok).toBe(true);
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

describe("a new run's opening, verified by its first planning turn", () => {
  let issuer: DevIssuer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'opening-'));
    issuer = await createDevIssuer(path.join(dir, 'identity'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A planner with the scripted model behind a call counter, verifying with the dev issuer (or none). */
  function planner(opts: { issuers?: boolean; requestLogFile?: string } = {}) {
    const asked = askedModel();
    const { planTurn } = createActivities({
      services: {},
      workerIdentity: 'opening-test',
      models: [asked.model],
      ...(opts.requestLogFile ? { planner: { requestLogFile: opts.requestLogFile } } : {}),
      ...(opts.issuers === false ? {} : { identity: { issuers: staticIdentitySource([issuer.config]) } }),
    });
    const run = (req: PlanTurnRequest) =>
      new MockActivityEnvironment({ attempt: 1 }).run(planTurn, req).then(
        (value) => ({ value: value as PlanTurnResponse }),
        (error: unknown) => ({ error: error as { type?: string; nonRetryable?: boolean; message: string } }),
      );
    return { run, calls: asked.calls };
  }
  const opening = async (tenant = 'acme') => ({
    // A start token for the run MockActivityEnvironment runs its activity for (workflow id `test`).
    token: await issuer.issueFor({ purpose: 'start', run: 'test' }, 'user:alice', tenant),
    principal: { id: 'user:alice', tenant: 'acme' },
    includePolicy: true,
  });

  test('a verified opening comes back with the plan: who the token names and the policy, never the token', async () => {
    const log = path.join(dir, 'requests.jsonl');
    const p = planner({ requestLogFile: log });
    const open = await opening();
    const out = await p.run({ ...scriptedRequest, opening: open });
    expect('value' in out && out.value.kind).toBe('proposals');
    const opened = 'value' in out ? out.value.opening : undefined;
    expect(opened?.identity).toMatchObject({ principalId: 'user:alice', tenant: 'acme', subject: 'user:alice' });
    expect(opened?.policy?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(p.calls()).toBe(1);
    expect(JSON.stringify(out)).not.toContain(open.token);
    // The request log records that the turn opened a run, for whom, and never the token.
    const logged = readFileSync(log, 'utf8');
    expect(logged).toContain('"opening":{"principal":{"id":"user:alice","tenant":"acme"}}');
    expect(logged).not.toContain(open.token);
  });

  test.each([
    ['a token for another tenant', 'Identity.Mismatch', () => opening('globex')],
    ['a malformed token', 'Identity.Invalid', async () => ({ ...(await opening()), token: 'not-a-token' })],
  ])('%s is refused, typed and not retried, and the model is never asked', async (_name, type, make) => {
    const p = planner();
    const out = await p.run({ ...scriptedRequest, opening: await make() });
    expect('error' in out && out.error).toMatchObject({ type, nonRetryable: true });
    expect(p.calls()).toBe(0);
  });

  test('a planner with no identity issuers refuses every opening (fail closed), without a model call', async () => {
    const p = planner({ issuers: false });
    const previous = process.env.LEDGERLOOP_IDENTITY_ISSUERS;
    delete process.env.LEDGERLOOP_IDENTITY_ISSUERS;
    try {
      const out = await p.run({ ...scriptedRequest, opening: await opening() });
      expect('error' in out && out.error).toMatchObject({ type: 'Identity.Unconfigured', nonRetryable: true });
    } finally {
      if (previous !== undefined) process.env.LEDGERLOOP_IDENTITY_ISSUERS = previous;
    }
    expect(p.calls()).toBe(0);
  });

  test('a turn without an opening is planned as before, with nothing verified', async () => {
    const p = planner();
    const out = await p.run(scriptedRequest);
    expect('value' in out && out.value.opening).toBeUndefined();
    expect(p.calls()).toBe(1);
  });
});

test("a model's Identity.* failure on an opening turn is typed as the model's own; elsewhere it passes unchanged", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'opening-model-'));
  try {
    const issuer = await createDevIssuer(path.join(dir, 'identity'));
    const failing = askedModel({ failWith: 'Identity.Invalid' });
    const { planTurn } = createActivities({
      services: {},
      workerIdentity: 'opening-model-test',
      models: [failing.model],
      identity: { issuers: staticIdentitySource([issuer.config]) },
    });
    const run = (req: PlanTurnRequest) =>
      new MockActivityEnvironment({ attempt: 1 }).run(planTurn, req).then(
        () => undefined,
        (error: unknown) => error as { type?: string; nonRetryable?: boolean },
      );
    const opening = {
      token: await issuer.issueFor({ purpose: 'start', run: 'test' }, 'user:alice', 'acme'),
      principal: { id: 'user:alice', tenant: 'acme' },
    };
    expect(await run({ ...scriptedRequest, opening })).toMatchObject({
      type: 'Planner.Identity.Invalid',
      nonRetryable: true,
    });
    expect(await run(scriptedRequest)).toMatchObject({ type: 'Identity.Invalid', nonRetryable: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
