/**
 * Cross-run rate limits on the real server: the tenant quota workflow counts the dispatches of every run of a
 * tenant, so starting more runs does not multiply a limit. Reservations go through the production path: the
 * `reserveQuota` activity (update-with-start on `ledgerloop-quota:<tenant>`), called by stand-in runs through
 * `reserveAcrossRuns` or directly in an activity context. Each test uses a tenant of its own.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { Failure } from '../../src/domain/failures';
import type { AuthorizationInput } from '../../src/policy/authorization';
import { evaluate } from '../../src/policy/evaluate';
import { Policy, rateLimitsOf, type RateLimit } from '../../src/policy/policy-format';
import { quotaWorkflowId, type QuotaDecision, type QuotaScopeRequest } from '../../src/policy/quota-window';
import { BUNDLER_OPTIONS } from '../../src/worker/bundle';
import { quotaStateQuery, tenantQuota } from '../../workflows/tenant-quota.workflow';
import type { DriverOutcome } from '../support/quota-driver.workflows';
import { scriptedModel } from '../../src/planner/scripted-model';
import { runtimeLogger } from '../../src/observability/logger';
import { quietRuntime } from '../helpers/stack';

jest.setTimeout(120_000);

const address = process.env.TEMPORAL_ADDRESS;
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const taskQueue = `tenant-quota-${process.pid}-${Date.now()}`;
let connection: Connection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
let activities: ReturnType<typeof createActivities>;
let native: NativeConnection;
let workflowBundle: { code: string };

beforeAll(async () => {
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set: run through scripts/test.ts');
  quietRuntime();
  let conn: Connection;
  [workflowBundle, native, conn] = await Promise.all([
    bundleWorkflowCode({
      workflowsPath: path.join(__dirname, '..', 'support', 'quota-driver.workflows.ts'),
      ...BUNDLER_OPTIONS,
      logger: runtimeLogger({ component: 'bundler', level: 'WARN', format: 'text' }),
    }),
    NativeConnection.connect({ address }),
    Connection.connect({ address }),
  ]);
  connection = conn;
  client = new Client({ connection, namespace });
  activities = createActivities({
    services: {},
    models: [scriptedModel()],
    workerIdentity: 'quota-test',
    quota: { client, taskQueue },
  });
  // maxCachedWorkflows 0: every update to the quota workflow replays its history first.
  worker = await Worker.create({
    connection: native,
    namespace,
    taskQueue,
    workflowBundle,
    activities,
    maxCachedWorkflows: 0,
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
});

let n = 0;
const newTenant = (): string => `t${Date.now().toString(36)}${(n += 1)}`;

/** The activity as a worker runs it, outside any workflow. */
function reserve(
  act: ReturnType<typeof createActivities>,
  tenant: string,
  reservationId: string,
  scopes: QuotaScopeRequest[],
): Promise<QuotaDecision> {
  return new MockActivityEnvironment({ startToCloseTimeoutMs: 20_000 }).run(act.reserveQuota, {
    tenant,
    reservationId,
    scopes,
  });
}

/** One stand-in agent run asking for one call through `reserveAcrossRuns`. */
function run(tenant: string, principalId: string, limits: RateLimit[]): Promise<DriverOutcome> {
  return client.workflow.execute('quotaDriver', {
    taskQueue,
    workflowId: `run-${tenant}-${(n += 1)}`,
    args: [{ tenant, principalId, logicalCallId: 'lc_1_debit', action: 'wallet.debit', limits }],
  });
}

async function errorOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(err)}`);
  return err;
}

describe('a rate limit holds across runs', () => {
  test('5 concurrent runs of one tenant, max 2 per 60 s: exactly 2 are admitted, the rest told when to retry', async () => {
    const tenant = newTenant();
    const limits = rateLimitsOf(
      Policy.parse({
        version: 'q/1',
        rules: [{ action: 'wallet.debit', rateLimit: { max: 2, perMs: 60_000, per: 'tenant' } }],
      }).rules[0]!,
    );
    const outcomes = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((p) => run(tenant, `user:${p}`, [...limits])));
    const admitted = outcomes.filter((o) => 'ok' in o && o.ok);
    const refused = outcomes.filter((o): o is Extract<DriverOutcome, { ok: false }> => 'ok' in o && !o.ok);
    expect(admitted).toHaveLength(2);
    expect(refused).toHaveLength(3);
    for (const r of refused) {
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(r.scope).toBe(`tenant:${tenant}`);
    }
    // The defect this replaces: counted per run (each run's own dispatch times, empty in a new run), all 5 pass.
    const perRun = Policy.parse({
      version: 'q/1',
      rules: [{ action: 'wallet.debit', rateLimit: { max: 2, perMs: 60_000, per: 'run' } }],
    });
    const perRunAdmitted = ['a', 'b', 'c', 'd', 'e'].filter(
      (p) => evaluate(perRun, authzInput(tenant, `user:${p}`)).kind === 'allowed',
    );
    expect(perRunAdmitted).toHaveLength(5);
    const view = await client.workflow.getHandle(quotaWorkflowId(tenant)).query(quotaStateQuery);
    expect(view.windows).toEqual([{ scope: `tenant:${tenant}`, action: 'wallet.debit', inWindow: 2 }]);
  });

  test('a retried reservation (same id) answers the same and never counts twice', async () => {
    const tenant = newTenant();
    const scopes = [{ scope: `tenant:${tenant}`, action: 'wallet.debit', max: 2, perMs: 60_000 }];
    expect(await reserve(activities, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    const again = await Promise.all([1, 2, 3].map(() => reserve(activities, tenant, 'run-1/lc_1', scopes)));
    expect(again.every((d) => d.ok)).toBe(true);
    expect(await reserve(activities, tenant, 'run-2/lc_1', scopes)).toEqual({ ok: true });
    expect(await reserve(activities, tenant, 'run-3/lc_1', scopes)).toMatchObject({
      ok: false,
      scope: `tenant:${tenant}`,
    });
  });

  test('releasing a reservation whose call was rejected before sending frees its slot', async () => {
    const tenant = newTenant();
    const scopes = [{ scope: `tenant:${tenant}`, action: 'wallet.debit', max: 1, perMs: 60_000 }];
    expect(await reserve(activities, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    expect((await reserve(activities, tenant, 'run-2/lc_1', scopes)).ok).toBe(false);
    const env = new MockActivityEnvironment({ startToCloseTimeoutMs: 20_000 });
    expect(await env.run(activities.releaseQuota, { tenant, reservationId: 'run-1/lc_1' })).toEqual({ released: true });
    expect(await env.run(activities.releaseQuota, { tenant, reservationId: 'run-1/lc_1' })).toEqual({
      released: false,
    });
    expect(await reserve(activities, tenant, 'run-2/lc_1', scopes)).toEqual({ ok: true });
    // a tenant that never reserved has no quota workflow: nothing to release, none started
    expect(await env.run(activities.releaseQuota, { tenant: newTenant(), reservationId: 'x/1' })).toEqual({
      released: false,
    });
  });

  test('a principal limit and a tenant limit both apply, all or nothing', async () => {
    const tenant = newTenant();
    const limits: RateLimit[] = [
      { max: 1, perMs: 60_000, per: 'principal' },
      { max: 3, perMs: 60_000, per: 'tenant' },
    ];
    expect(await run(tenant, 'user:alice', limits)).toEqual({ ok: true });
    // alice's second run: her own window is full (and the tenant slot it would have taken stays free)
    expect(await run(tenant, 'user:alice', limits)).toMatchObject({ ok: false, scope: 'principal:user:alice' });
    expect(await run(tenant, 'user:bob', limits)).toEqual({ ok: true });
    expect(await run(tenant, 'user:carol', limits)).toEqual({ ok: true });
    // dave's own window is empty, the tenant's is full
    expect(await run(tenant, 'user:dave', limits)).toMatchObject({ ok: false, scope: `tenant:${tenant}` });
  });

  test('windows survive continue-as-new', async () => {
    const tenant = newTenant();
    const handle = await client.workflow.start(tenantQuota, {
      taskQueue,
      workflowId: quotaWorkflowId(tenant),
      args: [{ tenant, continueAfterUpdates: 2 }],
    });
    const scopes = [{ scope: `tenant:${tenant}`, action: 'wallet.debit', max: 2, perMs: 60_000 }];
    expect(await reserve(activities, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    expect(await reserve(activities, tenant, 'run-2/lc_1', scopes)).toEqual({ ok: true });
    // the second update ended that run; these reach its successor through the same workflow id
    expect((await reserve(activities, tenant, 'run-3/lc_1', scopes)).ok).toBe(false);
    // the successor remembers run-1's reservation: a repeat is recognised, not counted
    expect(await reserve(activities, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true, duplicate: true });
    const latest = await client.workflow.getHandle(quotaWorkflowId(tenant)).describe();
    expect(latest.runId).not.toBe(handle.firstExecutionRunId);
    expect(latest.status.name).toBe('RUNNING');
  });
});

describe('fail closed', () => {
  test('a worker without a quota client refuses (Quota.Unavailable, not retried) instead of allowing', async () => {
    const bare = createActivities({ services: {}, models: [scriptedModel()], workerIdentity: 'no-quota' });
    const err = await errorOf(
      reserve(bare, newTenant(), 'run-1/lc_1', [
        { scope: 'principal:user:a', action: 'wallet.debit', max: 5, perMs: 1_000 },
      ]),
    );
    expect(err.type).toBe(Failure.QuotaUnavailable);
    expect(err.nonRetryable).toBe(true);
  });

  test('reserveAcrossRuns on a worker without a quota client throws QuotaUnavailable after one attempt', async () => {
    const bareQueue = `${taskQueue}-bare`;
    const bare = await Worker.create({
      connection: native,
      namespace,
      taskQueue: bareQueue,
      workflowBundle,
      activities: createActivities({ services: {}, models: [scriptedModel()], workerIdentity: 'no-quota' }),
    });
    const workflowId = `run-bare-${newTenant()}`;
    const outcome = await bare.runUntil(
      client.workflow.execute('quotaDriver', {
        taskQueue: bareQueue,
        workflowId,
        args: [
          {
            tenant: 'acme',
            principalId: 'user:a',
            logicalCallId: 'lc_1',
            action: 'wallet.debit',
            limits: [{ max: 5, perMs: 60_000, per: 'principal' }],
          },
        ],
      }),
    );
    expect(outcome).toMatchObject({ unavailable: expect.stringContaining('no quota client') });
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(
      events
        .filter((e) => e.activityTaskStartedEventAttributes)
        .map((e) => e.activityTaskStartedEventAttributes?.attempt),
    ).toEqual([1]);
  });

  test('a rule with only per-run limits asks no quota (no activity scheduled)', async () => {
    const workflowId = `run-local-${newTenant()}`;
    const outcome = await client.workflow.execute('quotaDriver', {
      taskQueue,
      workflowId,
      args: [
        {
          tenant: 'acme',
          principalId: 'user:a',
          logicalCallId: 'lc_1',
          action: 'wallet.debit',
          limits: [{ max: 1, perMs: 60_000, per: 'run' }],
        },
      ],
    });
    expect(outcome).toEqual({ ok: true });
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
  });

  test('a malformed reservation is refused by the validator and the quota workflow keeps running', async () => {
    const tenant = newTenant();
    const ok = [{ scope: `tenant:${tenant}`, action: 'wallet.debit', max: 1, perMs: 60_000 }];
    expect(await reserve(activities, tenant, 'run-1/lc_1', ok)).toEqual({ ok: true });
    // another tenant's window through this tenant's quota: refused by the workflow's validator
    const err = await errorOf(reserve(activities, tenant, 'run-2/lc_1', [{ ...ok[0]!, scope: 'tenant:someone-else' }]));
    expect(err.type).toBe(Failure.QuotaInvalidRequest);
    expect(err.nonRetryable).toBe(true);
    // raw update past the activity's own checks: refused too, never in history
    const handle = client.workflow.getHandle(quotaWorkflowId(tenant));
    const refused = {
      cause: { type: Failure.QuotaInvalidRequest, message: expect.stringMatching(/^invalid quota request/) },
    };
    await expect(
      handle.executeUpdate('reserveQuota', {
        args: [{ reservationId: 'x', scopes: [{ scope: 'tenant:' + tenant, action: 'a', max: -1, perMs: 1 }] }],
      }),
    ).rejects.toMatchObject(refused);
    await expect(handle.executeUpdate('reserveQuota', { args: ['not an object'] })).rejects.toMatchObject(refused);
    await expect(handle.executeUpdate('releaseQuota', { args: [{}] })).rejects.toMatchObject(refused);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await reserve(activities, tenant, 'run-3/lc_1', ok)).ok).toBe(false);
    const history = await handle.fetchHistory();
    expect(history.events?.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  });
});

function authzInput(tenant: string, principalId: string): AuthorizationInput {
  return {
    principalId,
    tenant,
    logicalCallId: 'lc_1_debit',
    operationKey: 'op',
    argumentsHash: 'h',
    toolName: 'wallet_debit',
    scope: 'wallet.charge',
    request: {
      action: 'wallet.debit',
      resource: `${tenant}/account/a`,
      resourceTenant: tenant,
      amountMinor: 100,
      currency: 'EUR',
    },
    origin: 'model',
    toolApprovalReason: null,
    recentDispatches: [],
    keyMode: 'exact',
    nowMs: Date.now(),
  };
}
