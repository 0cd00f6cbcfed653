/**
 * The starts of scripts/cluster-authz.ts (issue 39, hole 2): a start is another door to the execution running
 * under its id, and to more runs than one start asked for. `dan`, a starter of alice's tenant, tries each door on
 * alice's run while it waits for an approver; each refusal is followed by a look at alice's run (still RUNNING,
 * the same run id) and has a control beside it: the same start with a safe option is allowed to dan, and an admin
 * may do the act itself (which shows the door was real: alice's run ends TERMINATED by an admin's start).
 *
 *   - the id policies: conflict TERMINATE_EXISTING, reuse TERMINATE_IF_RUNNING (the server turns it into
 *     TERMINATE_EXISTING), the same through an update-with-start; FAIL and USE_EXISTING are allowed;
 *   - signal-with-start (an admin's only, as signals are);
 *   - a cron schedule and a retry policy (more runs from one start token);
 *   - on-conflict options (they add an event to the running execution: counted in its history), completion
 *     callbacks, links, eager execution, eager worker options, a previous run's failure or result, a versioning
 *     override, time skipping, a priority, and a field the server's API does not know.
 */
import { randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startAgentRun } from '../../host/client/runs';
import type { AgentRunInput } from '../../src/domain/run';
import type { TokenScope } from '../../src/identity/purpose';
import { SA } from '../../src/domain/search-attributes';
import { requestCancelUpdate } from '../../workflows/definitions';
import { type AuthzCheck, type Caller, GRPC } from './authz-check';

/** principal, tenant, roles: whose tokens a caller mints for its acts. */
export type Who = readonly [principal: string, tenant: string, roles: string[]];

export interface StartChecks {
  readonly check: AuthzCheck;
  readonly namespace: string;
  readonly taskQueue: string;
  /** Makes this section's workflow ids unique to this run of the check. */
  readonly stamp: string;
  readonly alice: Caller;
  readonly dan: Caller;
  readonly admin: Caller;
  readonly mint: (
    principal: string,
    tenant: string,
    roles: string[],
    iatSec?: number,
    scope?: TokenScope,
  ) => Promise<string>;
  readonly runInput: (principal: string, tenant: string) => AgentRunInput;
}

const E = temporal.api.enums.v1;
const StartRequest = temporal.api.workflowservice.v1.StartWorkflowExecutionRequest;
type RawStart = temporal.api.workflowservice.v1.IStartWorkflowExecutionRequest;
type RpcImpl = (method: { name: string }, data: Uint8Array, done: (err: Error | null) => void) => void;

/** Options of the raw starts below that dan is refused and an admin passes (on a running id: nothing starts). */
const REFUSED_OPTIONS: readonly { readonly name: string; readonly set: (r: RawStart, ns: string) => void }[] = [
  { name: 'completion callbacks', set: (r) => (r.completionCallbacks = [{ nexus: { url: 'http://127.0.0.1:9/cb' } }]) },
  {
    name: 'links to another tenant’s run',
    set: (r, ns) =>
      (r.links = [{ workflowEvent: { namespace: ns, workflowId: 'globex:authz-linked', runId: randomUUID() } }]),
  },
  { name: 'eager execution', set: (r) => (r.requestEagerExecution = true) },
  {
    name: 'eager worker deployment options',
    set: (r) => (r.eagerWorkerDeploymentOptions = { deploymentName: 'ledgerloop', buildId: 'authz' }),
  },
  { name: 'a previous run’s failure', set: (r) => (r.continuedFailure = { message: 'the last run failed' }) },
  {
    name: 'a previous run’s result',
    set: (r) =>
      (r.lastCompletionResult = {
        payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"done"') }],
      }),
  },
  { name: 'a versioning override', set: (r) => (r.versioningOverride = { autoUpgrade: true }) },
  { name: 'time skipping', set: (r) => (r.timeSkippingConfig = { enabled: true }) },
  {
    name: 'a priority (another tenant’s fairness key)',
    set: (r) => (r.priority = { priorityKey: 1, fairnessKey: 'globex' }),
  },
  { name: 'a cron schedule (raw)', set: (r) => (r.cronSchedule = '* * * * *') },
];

/**
 * Answers from the server behind the authorizer to a start it let through on a running id: already started, or
 * an option the server refuses itself (a callback address it does not allow, time skipping it does not enable).
 */
const PAST_THE_AUTHORIZER = [GRPC.ALREADY_EXISTS, GRPC.INVALID_ARGUMENT, GRPC.FAILED_PRECONDITION, GRPC.UNIMPLEMENTED];

export async function checkStarts(x: StartChecks): Promise<void> {
  const { check, namespace, taskQueue, stamp, alice, dan, admin } = x;
  const say = (line: string): void => check.say(line);
  const aliceWho: Who = ['user:alice', 'acme', ['starter']];
  const danWho: Who = ['user:dan', 'acme', ['starter']];
  const started: string[] = [];
  const id = (name: string): string => {
    const workflowId = `acme:authz-${stamp}-${name}`;
    started.push(workflowId);
    return workflowId;
  };

  /** An agentRun start through the SDK, with the run's own start token of `who` and `extra` options. */
  const startOptions = async (who: Who, workflowId: string, extra: Partial<WorkflowStartOptions> = {}) => ({
    workflowId,
    taskQueue,
    args: [
      {
        ...x.runInput(who[0], who[1]),
        identityToken: await x.mint(who[0], who[1], ['starter'], undefined, { purpose: 'start', run: workflowId }),
      },
    ],
    ...extra,
  });
  const start = async (c: Caller, who: Who, workflowId: string, extra: Partial<WorkflowStartOptions> = {}) =>
    c.client.workflow.start('agentRun', await startOptions(who, workflowId, extra));
  const updateWithStart = async (
    c: Caller,
    who: Who,
    workflowId: string,
    workflowIdConflictPolicy: 'TERMINATE_EXISTING' | 'USE_EXISTING',
  ) =>
    c.client.workflow.executeUpdateWithStart(requestCancelUpdate, {
      args: [{ token: await x.mint(...who, undefined, { purpose: 'cancel', run: workflowId }), reason: 'authz check' }],
      startWorkflowOperation: new WithStartWorkflowOperation('agentRun', {
        ...(await startOptions(who, workflowId)),
        workflowIdConflictPolicy,
      }),
    });
  const raw = (workflowId: string, change: (r: RawStart) => void = () => {}): RawStart => {
    const r: RawStart = {
      namespace,
      workflowId,
      workflowType: { name: 'agentRun' },
      taskQueue: { name: taskQueue },
      identity: 'cluster-authz-check',
      requestId: randomUUID(),
      workflowIdConflictPolicy: E.WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
      // Never a new run without input, even where the id's run has closed (on a frontend that let dan through).
      workflowIdReusePolicy: E.WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
    };
    change(r);
    return r;
  };
  /** The raw start with a field (number 999) this server's API does not have, sent as bytes. */
  const rawWithUnknownField = (c: Caller, r: RawStart): Promise<void> => {
    const bytes = StartRequest.encode(StartRequest.create(r))
      .uint32((999 << 3) | 0)
      .uint32(1)
      .finish();
    const rpc = (c.connection.workflowService as unknown as { rpcImpl: RpcImpl }).rpcImpl;
    return new Promise((resolve, reject) =>
      rpc({ name: 'StartWorkflowExecution' }, bytes, (err) => (err ? reject(err) : resolve())),
    );
  };
  const statusOf = async (workflowId: string, runId?: string): Promise<string> =>
    (await admin.client.workflow.getHandle(workflowId, runId).describe()).status.name;
  /** Waits (up to 60 s) until the run has reached its approval wait. */
  const waitingForApproval = async (h: WorkflowHandle): Promise<string | undefined> => {
    for (const until = Date.now() + 60_000; Date.now() < until;) {
      const d = await h.describe();
      if ((d.typedSearchAttributes.get(SA.pendingApprovals) ?? 0) >= 1) return undefined;
      if (d.status.name !== 'RUNNING') return `it is ${d.status.name}`;
      await new Promise((r) => setTimeout(r, 250));
    }
    return 'no pending approval within 60 s';
  };
  /** WorkflowExecutionOptionsUpdated events of the run the id names now (what on-conflict options change). */
  const optionsUpdatedEvents = async (workflowId: string): Promise<number> =>
    ((await admin.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter(
      (e) => e.eventType === E.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED,
    ).length;
  /** Only the server's NotFound says no run was started (any other error fails the line). */
  const noRunUnder = (workflowId: string) => async (): Promise<string | undefined> => {
    try {
      return `a run is there (${await statusOf(workflowId)})`;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  };

  say('starts: no start but an admin’s acts on a running execution or makes more runs than one');
  const victimId = id('alice-waits');
  const victim: WorkflowHandleWithFirstExecutionRunId = await startAgentRun(alice.client, {
    workflowId: victimId,
    taskQueue,
    input: x.runInput(aliceWho[0], aliceWho[1]),
    identityToken: (run) => x.mint(...aliceWho, undefined, { purpose: 'start', run }),
  });
  const victimRun = victim.firstExecutionRunId;
  await check.holds(`alice's run ${victimId} waits for an approver`, () => waitingForApproval(victim));
  const untouched = (after: string) =>
    check.holds(`after ${after}: alice's run is still RUNNING under ${victimId}`, async () => {
      const now = await admin.client.workflow.getHandle(victimId).describe();
      if (now.runId !== victimRun)
        return `the id now names run ${now.runId} (${now.status.name}); alice's run is ${await statusOf(victimId, victimRun)}`;
      return now.status.name === 'RUNNING' ? undefined : `it is ${now.status.name}`;
    });

  say('  the id policies');
  await check.refused(`dan: start ${victimId} with id-conflict policy TERMINATE_EXISTING`, () =>
    start(dan, danWho, victimId, { workflowIdConflictPolicy: 'TERMINATE_EXISTING' }),
  );
  await untouched('TERMINATE_EXISTING');
  await check.refused(`dan: start ${victimId} with id-reuse policy TERMINATE_IF_RUNNING`, () =>
    start(dan, danWho, victimId, { workflowIdReusePolicy: 'TERMINATE_IF_RUNNING' }),
  );
  await untouched('TERMINATE_IF_RUNNING');
  await check.refused(`dan: update-with-start ${victimId} with TERMINATE_EXISTING`, () =>
    updateWithStart(dan, danWho, victimId, 'TERMINATE_EXISTING'),
  );
  await untouched('the update-with-start');
  await check.refused(`dan: signal-with-start ${victimId}`, async () =>
    dan.client.workflow.signalWithStart('agentRun', {
      ...(await startOptions(danWho, victimId)),
      signal: 'authzProbe',
      signalArgs: [],
    }),
  );
  await untouched('the signal-with-start');
  await check.passes(
    `control: dan: the same start of ${victimId} with id-conflict policy FAIL`,
    () => dan.connection.workflowService.startWorkflowExecution(raw(victimId)),
    [GRPC.ALREADY_EXISTS],
  );
  await check.accepted(
    `control: dan: the same start of ${victimId} with USE_EXISTING (alice's run is returned, unchanged)`,
    () =>
      dan.connection.workflowService.startWorkflowExecution(
        raw(
          victimId,
          (r) => (r.workflowIdConflictPolicy = E.WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING),
        ),
      ),
    (r) => (r.started === false && r.runId === victimRun ? undefined : `started ${r.started}, run ${r.runId}`),
  );
  await untouched('the controls');
  const danOwn = id('dan-own');
  await check.accepted(
    `control: dan: start ${danOwn} with REJECT_DUPLICATE and FAIL`,
    () => start(dan, danWho, danOwn, { workflowIdReusePolicy: 'REJECT_DUPLICATE', workflowIdConflictPolicy: 'FAIL' }),
    async (h) => ((await statusOf(h.workflowId)) === 'RUNNING' ? undefined : 'not RUNNING'),
  );
  const danUws = id('dan-uws');
  await check.accepted(
    `control: dan: update-with-start ${danUws} with USE_EXISTING (requestCancel of dan's own run)`,
    () => updateWithStart(dan, danWho, danUws, 'USE_EXISTING'),
    (r) => (r.accepted === true ? undefined : 'the run did not accept it'),
  );

  say('  more runs than one start');
  const danCron = id('dan-cron');
  await check.refused(`dan: start ${danCron} with a cron schedule`, () =>
    start(dan, danWho, danCron, { cronSchedule: '* * * * *' }),
  );
  await check.holds(`no run under ${danCron}`, noRunUnder(danCron));
  const danRetry = id('dan-retry');
  await check.refused(`dan: start ${danRetry} with a retry policy`, () =>
    start(dan, danWho, danRetry, { retry: { maximumAttempts: 3 } }),
  );
  await check.holds(`no run under ${danRetry}`, noRunUnder(danRetry));

  say(
    `  other start options (raw starts of ${victimId} with FAIL and REJECT_DUPLICATE: an admin's get past the authorizer, none starts)`,
  );
  await check.refused(`dan: on-conflict options attaching to ${victimId} (USE_EXISTING)`, () =>
    dan.connection.workflowService.startWorkflowExecution(
      raw(victimId, (r) => {
        r.workflowIdConflictPolicy = E.WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING;
        r.onConflictOptions = { attachRequestId: true, attachCompletionCallbacks: true, attachLinks: true };
      }),
    ),
  );
  await check.holds(`the run under the id has no options-updated event`, async () => {
    const n = await optionsUpdatedEvents(victimId);
    return n === 0 ? undefined : `${n} in its history`;
  });
  for (const o of REFUSED_OPTIONS) {
    await check.refused(`dan: with ${o.name}`, () =>
      dan.connection.workflowService.startWorkflowExecution(raw(victimId, (r) => o.set(r, namespace))),
    );
    await check.passes(
      `control: admin: with ${o.name}`,
      async () => {
        const r = await admin.connection.workflowService.startWorkflowExecution(
          raw(victimId, (q) => o.set(q, namespace)),
        );
        if (r.started) throw new Error(`it started run ${r.runId}`);
      },
      PAST_THE_AUTHORIZER,
    );
  }
  await check.refused('dan: with a field the server’s API does not know', () =>
    rawWithUnknownField(dan, raw(victimId)),
  );
  await check.passes(
    'control: admin: with a field the server’s API does not know',
    () => rawWithUnknownField(admin, raw(victimId)),
    PAST_THE_AUTHORIZER,
  );
  await untouched('the other options');

  say('  an admin may');
  await check.accepted(
    `admin: on-conflict options attaching a request id to ${victimId}`,
    () =>
      admin.connection.workflowService.startWorkflowExecution(
        raw(victimId, (r) => {
          r.workflowIdConflictPolicy = E.WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING;
          r.onConflictOptions = { attachRequestId: true };
        }),
      ),
    async (r) => {
      const n = await optionsUpdatedEvents(victimId);
      return r.started === false && n === 1 ? undefined : `started ${r.started}, ${n} options-updated event(s)`;
    },
  );
  for (const [what, extra] of [
    ['a cron schedule', { cronSchedule: '* * * * *' }],
    ['a retry policy', { retry: { maximumAttempts: 3 } }],
  ] as const) {
    const workflowId = id(`admin-${extra.cronSchedule ? 'cron' : 'retry'}`);
    await check.accepted(
      `admin: start ${workflowId} with ${what}`,
      () => start(admin, aliceWho, workflowId, extra),
      async (h) => ((await statusOf(h.workflowId)) === 'RUNNING' ? undefined : 'not RUNNING'),
    );
  }
  const adminSws = id('admin-sws');
  await check.accepted(`admin: signal-with-start ${adminSws}`, async () =>
    admin.client.workflow.signalWithStart('agentRun', {
      ...(await startOptions(aliceWho, adminSws)),
      signal: 'authzProbe',
      signalArgs: [],
    }),
  );
  // Each terminating start replaces the run under the id. The server refuses to terminate a run for a new one
  // within history.workflowIdReuseMinimalInterval (1 s by default) of its start, so the next one waits until the
  // new run holds its approval and is older than that.
  let current: string = victimRun;
  const replaced = async (h: WorkflowHandle): Promise<string | undefined> => {
    const before = await statusOf(victimId, current);
    if (before !== 'TERMINATED') return `the run it replaced is ${before}, not TERMINATED`;
    const now = await admin.client.workflow.getHandle(victimId).describe();
    if (now.runId === current) return 'no new run under the id';
    current = now.runId;
    const waiting = await waitingForApproval(h);
    const age = Date.now() - now.startTime.getTime();
    if (age < 1_100) await new Promise((r) => setTimeout(r, 1_100 - age));
    return waiting;
  };
  await check.accepted(
    `admin: start ${victimId} with TERMINATE_EXISTING (alice's run ends TERMINATED)`,
    () => start(admin, aliceWho, victimId, { workflowIdConflictPolicy: 'TERMINATE_EXISTING' }),
    replaced,
  );
  await check.accepted(
    `admin: start ${victimId} with TERMINATE_IF_RUNNING`,
    () => start(admin, aliceWho, victimId, { workflowIdReusePolicy: 'TERMINATE_IF_RUNNING' }),
    replaced,
  );
  await check.accepted(
    `admin: update-with-start ${victimId} with TERMINATE_EXISTING (and alice's requestCancel)`,
    () => updateWithStart(admin, aliceWho, victimId, 'TERMINATE_EXISTING'),
    async (r) =>
      r.accepted !== true
        ? 'the run did not accept it'
        : (await statusOf(victimId, current)) === 'TERMINATED'
          ? undefined
          : 'the run it replaced is not TERMINATED',
  );

  // Whatever this section started and still runs (on a frontend that let dan through: his runs too).
  for (const workflowId of started) {
    await admin.client.workflow
      .getHandle(workflowId)
      .terminate('authz check: done')
      .catch(() => undefined);
  }
}
