/**
 * Cross-run rate limits on the real server, their windows in the workers' quota store (src/stores/quota-store.ts):
 * SQLite for one host, PostgreSQL for several (a private PostgreSQL this file starts, host/server/postgres.ts).
 * Both backends keep the same promises, each shown with its control: a limit admits exactly its `max` however many
 * runs ask at once, a retried reservation never counts twice, a released one frees its slot, and nothing a Temporal
 * client can do (terminate, reset) raises a limit. Reservations go through the production path: the `reserveQuota`
 * activity, called by stand-in runs through `reserveAcrossRuns` or directly in an activity context.
 * Each test uses a tenant of its own.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { Failure } from '../../src/domain/failures';
import { runtimeLogger } from '../../src/observability/logger';
import type { AuthorizationInput } from '../../src/domain/authorization';
import { evaluate } from '../../src/policy/evaluate';
import { Policy, type RateLimit } from '../../src/domain/policy-format';
import { rateLimitsOf } from '../../src/policy/policy-rules';
import { QuotaStore, type QuotaBackend } from '../../src/stores/quota-store';
import { PostgresQuotaBackend } from '../../src/stores/quota-store-pg';
import { SqliteQuotaBackend } from '../../src/stores/quota-store-sqlite';
import type { QuotaDecision, QuotaScopeRequest } from '../../src/policy/quota-window';
import { labScriptedModel } from '../../lab/scenarios';
import { BUNDLER_OPTIONS } from '../../host/worker/bundle';
import type { DriverOutcome } from '../support/quota-driver.workflows';
import { quietRuntime } from '../helpers/stack';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { getFreePort } from '../../host/server/dev-server';

jest.setTimeout(180_000);

type Kind = 'sqlite' | 'postgres';
const KINDS: readonly Kind[] = ['sqlite', 'postgres'];

const address = process.env.TEMPORAL_ADDRESS;
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const stamp = `${process.pid}-${Date.now()}`;
let dir: string;
let pgUrl: string;
let pg: TestPostgres;
let connection: Connection;
let client: Client;
let native: NativeConnection;
let workflowBundle: { code: string };

/** Per backend: its store, the activities a worker runs with it, and that worker's task queue. */
interface Setup {
  readonly store: QuotaStore;
  readonly activities: ReturnType<typeof createActivities>;
  readonly taskQueue: string;
  readonly worker: Worker;
  readonly running: Promise<void>;
}
const setups = new Map<Kind, Setup>();
const toClose: QuotaStore[] = [];

/** A new connection to the backend of `kind`'s store: what another worker (or a restarted one) would open. */
function backendOf(kind: Kind): QuotaBackend {
  return kind === 'sqlite' ? new SqliteQuotaBackend(path.join(dir, 'quota.db')) : new PostgresQuotaBackend(pgUrl);
}

function storeOf(backend: QuotaBackend): QuotaStore {
  const store = new QuotaStore(backend);
  toClose.push(store);
  return store;
}

const activitiesWith = (store?: QuotaStore) =>
  createActivities({
    services: {},
    models: [labScriptedModel()],
    workerIdentity: 'quota-test',
    ...(store ? { quota: { store } } : {}),
  });

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
    startTestPostgres('quota').then((started) => {
      pg = started;
      dir = started.dir;
    }),
  ]);
  pgUrl = pg.url; // the cluster's `ledgerloop` database: the workers' transcripts and quota windows
  connection = conn;
  client = new Client({ connection, namespace });
  for (const kind of KINDS) {
    const store = storeOf(backendOf(kind));
    const activities = activitiesWith(store);
    const taskQueue = `tenant-quota-${kind}-${stamp}`;
    const worker = await Worker.create({
      connection: native,
      namespace,
      taskQueue,
      workflowBundle,
      activities,
      maxCachedWorkflows: 0,
    });
    setups.set(kind, { store, activities, taskQueue, worker, running: worker.run() });
  }
});

afterAll(async () => {
  for (const s of setups.values()) s.worker.shutdown();
  await Promise.all([...setups.values()].map((s) => s.running));
  await Promise.all(toClose.map((s) => s.close().catch(() => undefined)));
  await connection?.close();
  await pg?.stop();
});

let n = 0;
const newTenant = (): string => `t${Date.now().toString(36)}${(n += 1)}`;

/** The activity as a worker runs it, outside any workflow. */
function reserve(
  act: ReturnType<typeof createActivities>,
  tenant: string,
  reservationId: string,
  scopes: QuotaScopeRequest[],
  nowMs?: number,
): Promise<QuotaDecision> {
  return new MockActivityEnvironment({ startToCloseTimeoutMs: 20_000 }).run(act.reserveQuota, {
    tenant,
    reservationId,
    scopes,
    ...(nowMs !== undefined ? { nowMs } : {}),
  });
}

const tenantScope = (tenant: string, max: number) => [
  { scope: `tenant:${tenant}`, action: 'wallet.debit', max, perMs: 60_000 },
];

/** One stand-in agent run asking for one call through `reserveAcrossRuns`; its workflow id is its run id. */
function run(kind: Kind, tenant: string, principalId: string, limits: RateLimit[], workflowId?: string) {
  return client.workflow.execute('quotaDriver', {
    taskQueue: setups.get(kind)!.taskQueue,
    workflowId: workflowId ?? `run-${tenant}-${(n += 1)}`,
    args: [{ tenant, principalId, logicalCallId: 'lc_1_debit', action: 'wallet.debit', limits }],
  }) as Promise<DriverOutcome>;
}

const admitted = (outcomes: readonly DriverOutcome[]) => outcomes.filter((o) => 'ok' in o && o.ok).length;

async function errorOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(err)}`);
  return err;
}

describe.each(KINDS)('a rate limit holds across runs (%s store)', (kind) => {
  const setup = () => setups.get(kind)!;

  test('5 concurrent runs of one tenant, max 2 per 60 s: exactly 2 are admitted, the rest told when to retry', async () => {
    const tenant = newTenant();
    const limits = rateLimitsOf(
      Policy.parse({
        version: 'q/1',
        rules: [{ action: 'wallet.debit', rateLimit: { max: 2, perMs: 60_000, per: 'tenant' } }],
      }).rules[0]!,
    );
    const outcomes = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((p) => run(kind, tenant, `user:${p}`, [...limits])),
    );
    const refused = outcomes.filter((o): o is Extract<DriverOutcome, { ok: false }> => 'ok' in o && !o.ok);
    expect(admitted(outcomes)).toBe(2);
    expect(refused).toHaveLength(3);
    for (const r of refused) {
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(r.scope).toBe(`tenant:${tenant}`);
    }
    // The defect cross-run limits replaced: counted per run (each run's own dispatch times), all 5 pass.
    const perRun = Policy.parse({
      version: 'q/1',
      rules: [{ action: 'wallet.debit', rateLimit: { max: 2, perMs: 60_000, per: 'run' } }],
    });
    const perRunAdmitted = ['a', 'b', 'c', 'd', 'e'].filter(
      (p) => evaluate(perRun, authzInput(tenant, `user:${p}`)).kind === 'allowed',
    );
    expect(perRunAdmitted).toHaveLength(5);
    expect(await setup().store.usage(tenant)).toEqual({
      windows: [{ scope: `tenant:${tenant}`, action: 'wallet.debit', inWindow: 2 }],
      heldReservations: 2,
    });
  });

  test('a retried reservation (same id) answers the same and never counts twice', async () => {
    const tenant = newTenant();
    const act = setup().activities;
    const scopes = tenantScope(tenant, 2);
    expect(await reserve(act, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    const again = await Promise.all([1, 2, 3].map(() => reserve(act, tenant, 'run-1/lc_1', scopes)));
    expect(again).toEqual([1, 2, 3].map(() => ({ ok: true, duplicate: true })));
    expect(await reserve(act, tenant, 'run-2/lc_1', scopes)).toEqual({ ok: true });
    expect(await reserve(act, tenant, 'run-3/lc_1', scopes)).toMatchObject({ ok: false, scope: `tenant:${tenant}` });
  });

  test('releasing a reservation whose call was rejected before sending frees its slot, once', async () => {
    const tenant = newTenant();
    const act = setup().activities;
    const scopes = tenantScope(tenant, 1);
    expect(await reserve(act, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    expect((await reserve(act, tenant, 'run-2/lc_1', scopes)).ok).toBe(false);
    const env = new MockActivityEnvironment({ startToCloseTimeoutMs: 20_000 });
    expect(await env.run(act.releaseQuota, { tenant, reservationId: 'run-1/lc_1' })).toEqual({ released: true });
    expect(await env.run(act.releaseQuota, { tenant, reservationId: 'run-1/lc_1' })).toEqual({ released: false });
    expect(await reserve(act, tenant, 'run-2/lc_1', scopes)).toEqual({ ok: true });
    // a tenant that never reserved holds nothing to release
    expect(await env.run(act.releaseQuota, { tenant: newTenant(), reservationId: 'x/1' })).toEqual({
      released: false,
    });
  });

  test('a principal limit and a tenant limit both apply, all or nothing', async () => {
    const tenant = newTenant();
    const limits: RateLimit[] = [
      { max: 1, perMs: 60_000, per: 'principal' },
      { max: 3, perMs: 60_000, per: 'tenant' },
    ];
    expect(await run(kind, tenant, 'user:alice', limits)).toEqual({ ok: true });
    // alice's second run: her own window is full (and the tenant slot it would have taken stays free)
    expect(await run(kind, tenant, 'user:alice', limits)).toMatchObject({ ok: false, scope: 'principal:user:alice' });
    expect(await run(kind, tenant, 'user:bob', limits)).toEqual({ ok: true });
    expect(await run(kind, tenant, 'user:carol', limits)).toEqual({ ok: true });
    // dave's own window is empty, the tenant's is full
    expect(await run(kind, tenant, 'user:dave', limits)).toMatchObject({ ok: false, scope: `tenant:${tenant}` });
  });

  test('the windows outlive the worker: a new connection to the store (another worker, a restart) sees them', async () => {
    const tenant = newTenant();
    const scopes = tenantScope(tenant, 2);
    expect(await reserve(setup().activities, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    expect(await reserve(setup().activities, tenant, 'run-2/lc_1', scopes)).toEqual({ ok: true });
    const other = storeOf(backendOf(kind));
    const otherWorker = activitiesWith(other);
    expect((await reserve(otherWorker, tenant, 'run-3/lc_1', scopes)).ok).toBe(false);
    expect(await reserve(otherWorker, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true, duplicate: true });
  });

  test('a caller cannot move a window by sending a time: the store’s clock decides', async () => {
    const tenant = newTenant();
    const act = setup().activities;
    const scopes = tenantScope(tenant, 1);
    expect(await reserve(act, tenant, 'run-1/lc_1', scopes)).toEqual({ ok: true });
    const future = Date.now() + 3_600_000;
    expect(await reserve(act, tenant, 'run-2/lc_1', scopes, future)).toMatchObject({ ok: false });
    // control: a window that has really passed admits again (a 1 s window, waited out on the store's clock)
    const short = [{ scope: `tenant:${tenant}`, action: 'wallet.refund', max: 1, perMs: 1_000 }];
    expect(await reserve(act, tenant, 'run-3/lc_1', short)).toEqual({ ok: true });
    expect((await reserve(act, tenant, 'run-4/lc_1', short)).ok).toBe(false);
    // The wait is what is tested: the window passes on the store's clock. There is nothing to poll for that
    // would not itself be a reservation, so the test waits the window out (and 200 ms beyond it).
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await reserve(act, tenant, 'run-4/lc_1', short)).toEqual({ ok: true });
  });
});

describe.each(KINDS)('attack (issue 28): terminate and reset what Temporal holds (%s store)', (kind) => {
  const EventType = temporal.api.enums.v1.EventType;

  /** Resets a finished driver run to just after its first workflow task: it runs again from there. */
  async function resetToStart(workflowId: string): Promise<string> {
    const handle = client.workflow.getHandle(workflowId);
    const events = (await handle.fetchHistory()).events ?? [];
    const firstTask = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const { runId } = await client.workflowService.resetWorkflowExecution({
      namespace,
      workflowExecution: { workflowId },
      workflowTaskFinishEventId: firstTask!.eventId,
      requestId: `${workflowId}-reset-${Date.now()}`,
      reason: 'attack: reset to before the reservation',
    });
    return runId!;
  }

  test('terminating the old quota workflow id, and resetting every run that reserved, never raises the limit', async () => {
    const tenant = newTenant();
    const limits: RateLimit[] = [{ max: 2, perMs: 60_000, per: 'tenant' }];
    const ids = ['a', 'b', 'c'].map((p) => `run-${tenant}-${p}`);
    // The control: the limit admits exactly its max.
    const first = await Promise.all(ids.map((id, i) => run(kind, tenant, `user:${i}`, limits, id)));
    expect(admitted(first)).toBe(2);

    // What emptied the limit before (2 allowed, 5 went through): `temporal workflow terminate -w
    // ledgerloop-quota:<tenant>`, sent without a token. No such workflow exists now: Temporal holds no window.
    await expect(
      client.workflow.getHandle(`ledgerloop-quota:${tenant}`).terminate('attack: no token'),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    // Reset every run that asked: each runs its reservation again, with the same reservation id.
    const again = await Promise.all(
      ids.map(async (id) => {
        const runId = await resetToStart(id);
        return client.workflow.getHandle(id, runId).result() as Promise<DriverOutcome>;
      }),
    );
    // The two that held a slot find it again (the same call, counted once); the third is still refused.
    expect(admitted(again)).toBe(2);
    const after = await Promise.all(['d', 'e', 'f'].map((p) => run(kind, tenant, `user:${p}`, limits)));
    expect(admitted(after)).toBe(0);
    expect((await setups.get(kind)!.store.usage(tenant)).windows).toEqual([
      { scope: `tenant:${tenant}`, action: 'wallet.debit', inWindow: 2 },
    ]);
    // Control of the attack's own premise: another tenant, same limit, admits exactly its max again.
    const fresh = newTenant();
    const control = await Promise.all(['g', 'h', 'i'].map((p) => run(kind, fresh, `user:${p}`, limits)));
    expect(admitted(control)).toBe(2);
  });
});

describe('fail closed', () => {
  const scopes = (tenant: string) => tenantScope(tenant, 5);

  test('a worker without a quota store refuses (Quota.Unavailable, not retried) instead of allowing', async () => {
    const none = newTenant();
    const err = await errorOf(reserve(activitiesWith(undefined), none, 'run-1/lc_1', scopes(none)));
    expect(err.type).toBe(Failure.QuotaUnavailable);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(/no quota store/);
  });

  test('reserveAcrossRuns on a worker without a quota store throws QuotaUnavailable after one attempt', async () => {
    const bareQueue = `tenant-quota-bare-${stamp}`;
    const bare = await Worker.create({
      connection: native,
      namespace,
      taskQueue: bareQueue,
      workflowBundle,
      activities: activitiesWith(undefined),
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
    expect(outcome).toMatchObject({ unavailable: expect.stringContaining('no quota store') });
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(
      events
        .filter((e) => e.activityTaskStartedEventAttributes)
        .map((e) => e.activityTaskStartedEventAttributes?.attempt),
    ).toEqual([1]);
  });

  test.each([
    [
      'PostgreSQL that does not answer',
      async () => new PostgresQuotaBackend(`postgres://x@127.0.0.1:${await getFreePort()}/db`),
    ],
    ['a SQLite file that cannot be opened', async () => new SqliteQuotaBackend('/dev/null/quota.db')],
  ])('%s refuses (Quota.Unavailable, retryable); a store that answers admits (the control)', async (_n, make) => {
    const down = newTenant();
    const err = await errorOf(reserve(activitiesWith(storeOf(await make())), down, 'run-1/lc_1', scopes(down)));
    expect(err.type).toBe(Failure.QuotaUnavailable);
    expect(err.nonRetryable).toBe(false);
    expect(err.message).toMatch(/quota (store|database)/);
    const tenant = newTenant();
    expect(await reserve(setups.get('sqlite')!.activities, tenant, 'run-1/lc_1', scopes(tenant))).toEqual({
      ok: true,
    });
  });

  test('a run whose store does not answer is refused after the activity’s three attempts', async () => {
    const deadQueue = `tenant-quota-dead-${stamp}`;
    const dead = await Worker.create({
      connection: native,
      namespace,
      taskQueue: deadQueue,
      workflowBundle,
      activities: activitiesWith(storeOf(new SqliteQuotaBackend('/dev/null/quota.db'))),
    });
    const workflowId = `run-dead-${newTenant()}`;
    const outcome = await dead.runUntil(
      client.workflow.execute('quotaDriver', {
        taskQueue: deadQueue,
        workflowId,
        args: [
          {
            tenant: 'acme',
            principalId: 'user:a',
            logicalCallId: 'lc_1',
            action: 'wallet.debit',
            limits: [{ max: 5, perMs: 60_000, per: 'tenant' }],
          },
        ],
      }),
    );
    expect(outcome).toMatchObject({ unavailable: expect.stringContaining('quota database cannot be opened') });
    // History records the last attempt of an activity: the third, failed.
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    expect(
      events
        .filter((e) => e.activityTaskStartedEventAttributes)
        .map((e) => e.activityTaskStartedEventAttributes?.attempt),
    ).toEqual([3]);
    expect(events.some((e) => e.activityTaskFailedEventAttributes)).toBe(true);
  });

  test.each(KINDS)(
    'a %s row someone edited refuses until it is rebuilt; deleting it resets that tenant (the control)',
    async (kind) => {
      const tenant = newTenant();
      const act = setups.get(kind)!.activities;
      expect(await reserve(act, tenant, 'run-1/lc_1', tenantScope(tenant, 1))).toEqual({ ok: true });
      await editRow(kind, tenant, '{"windows": "nope"}');
      const err = await errorOf(reserve(act, tenant, 'run-2/lc_1', tenantScope(tenant, 1)));
      expect(err.type).toBe(Failure.QuotaUnavailable);
      expect(err.message).toMatch(/unknown shape/);
      await editRow(kind, tenant, undefined);
      expect(await reserve(act, tenant, 'run-2/lc_1', tenantScope(tenant, 1))).toEqual({ ok: true });
    },
  );

  test('a rule with only per-run limits asks no quota (no activity scheduled)', async () => {
    const workflowId = `run-local-${newTenant()}`;
    const outcome = await client.workflow.execute('quotaDriver', {
      taskQueue: setups.get('sqlite')!.taskQueue,
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

  test('a malformed reservation is refused (Quota.InvalidRequest, not retried) and holds nothing', async () => {
    const tenant = newTenant();
    const act = setups.get('sqlite')!.activities;
    const ok = tenantScope(tenant, 1);
    const refusals = [
      reserve(act, tenant, 'run-2/lc_1', [{ ...ok[0]!, scope: 'tenant:someone-else' }]),
      reserve(act, tenant, 'run-2/lc_1', [{ ...ok[0]!, max: -1 }]),
      reserve(act, 'bad tenant!', 'run-2/lc_1', ok),
      new MockActivityEnvironment().run(act.reserveQuota, 'not an object' as never),
    ];
    for (const p of refusals) {
      const err = await errorOf(p);
      expect(err.type).toBe(Failure.QuotaInvalidRequest);
      expect(err.nonRetryable).toBe(true);
    }
    expect(await setups.get('sqlite')!.store.usage(tenant)).toEqual({ windows: [], heldReservations: 0 });
    expect(await reserve(act, tenant, 'run-1/lc_1', ok)).toEqual({ ok: true });
  });
});

/** Writes `state` into the tenant's row behind the store's back, or deletes the row (undefined). */
async function editRow(kind: Kind, tenant: string, state: string | undefined): Promise<void> {
  if (kind === 'sqlite') {
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(path.join(dir, 'quota.db'));
    try {
      if (state === undefined) db.prepare('DELETE FROM ledgerloop_quota WHERE tenant = ?').run(tenant);
      else db.prepare('UPDATE ledgerloop_quota SET state = ? WHERE tenant = ?').run(state, tenant);
    } finally {
      db.close();
    }
    return;
  }
  const { Client: PgClient } = await import('pg');
  const c = new PgClient({ connectionString: pgUrl });
  await c.connect();
  try {
    if (state === undefined) await c.query('DELETE FROM ledgerloop_quota WHERE tenant = $1', [tenant]);
    else await c.query('UPDATE ledgerloop_quota SET state = $1 WHERE tenant = $2', [state, tenant]);
  } finally {
    await c.end();
  }
}

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
