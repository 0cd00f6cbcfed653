/**
 * The cluster's frontend authorizes, shown against the real server that `ledgerloop cluster up` runs (CI:
 * scripts/cluster-ci.sh). Each refusal is printed beside its control, the same call by a caller it is meant for,
 * so a frontend that refused everything (or a dead port) fails here too:
 *
 *   - terminate: refused without a token, to a starter and to an operator; accepted from an admin;
 *   - the quota workflow: terminate refused without a token; an admin's passes the frontend;
 *   - updates: a starter of acme is refused on a globex run, and accepted on its own; globex's on its own;
 *   - starts (lab/cluster/authz-starts.ts): another starter of acme is refused every start that would terminate,
 *     or change, alice's running run (id policies, update-with-start, signal-with-start, on-conflict options) or
 *     make more runs than one (cron, retry), and every start option the authorizer refuses; the same starts with
 *     safe options are allowed, and an admin's terminating start ends alice's run TERMINATED;
 *   - workers: a `worker:<queue>` token polls its queue (and gets the task waiting there), and is refused another;
 *   - the Web UI's gateway lists runs as a viewer, and is refused a terminate; without a token the frontend
 *     answers system info and refuses a list, over gRPC and over its HTTP API;
 *   - a token that does not verify (an admin's, expired) is refused whatever it asks.
 *
 * Tokens are minted with the cluster's development issuer key (.data/cluster/identity/issuer-key.json, 0600).
 *
 *   node -r tsx/cjs scripts/cluster-authz.ts      # exits 1 when one line is not as expected
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { AuthzCheck, type Caller } from '../lab/cluster/authz-check';
import { checkStarts } from '../lab/cluster/authz-starts';
import { CLUSTER_DIR, readState } from '../lab/cluster/cluster';
import { clusterPorts, CLUSTER_NAMESPACE, DEPLOYMENT_TASK_QUEUE, portOffsetFromEnv } from '../lab/cluster/versions';
import { startAgentRun } from '../host/client/runs';
import { dataConverterFromEnv } from '../src/codec/data-converter';
import { DEMO_KEY_FILE, ensureCodecKeys } from '../src/codec/demo-key';
import type { AgentRunInput } from '../src/domain/run';
import { issueIdentityToken } from '../src/identity/issue';
import { connectClient } from '../host/server/connection-config';
import { requestCancelUpdate } from '../workflows/definitions';
import type { TokenScope } from '../src/identity/purpose';

async function main(): Promise<number> {
  const started = Date.now();
  const check = new AuthzCheck((line) => process.stdout.write(`${line}\n`));
  const say = (line: string): void => check.say(line);
  const state = readState();
  const address = state?.address ?? `127.0.0.1:${clusterPorts(portOffsetFromEnv()).frontend}`;
  const namespace = CLUSTER_NAMESPACE;
  const key = JSON.parse(fs.readFileSync(path.join(CLUSTER_DIR, 'identity', 'issuer-key.json'), 'utf8')) as {
    issuer: string;
    audience: string;
    privateJwk: { kid: string } & Record<string, unknown>;
  };
  // Session tokens (the frontend's credentials), or, with `scope`, a token for one act on one run (the run's own).
  const mint = (
    principal: string,
    tenant: string,
    roles: string[],
    iatSec?: number,
    scope?: TokenScope,
  ): Promise<string> =>
    issueIdentityToken(
      { subject: principal, principal, tenant, roles, ...scope },
      {
        issuer: key.issuer,
        audience: key.audience,
        kid: key.privateJwk.kid,
        privateJwk: key.privateJwk,
        ttlSec: scope ? 300 : 600,
        ...(iatSec !== undefined ? { iatSec } : {}),
      },
    );
  // The cluster's payloads are encrypted: the same keys as `cluster up` (configured, or the demo key).
  ensureCodecKeys(DEMO_KEY_FILE);
  const dataConverter = dataConverterFromEnv();
  const opened: Connection[] = [];
  const as = async (token: string | undefined, at = address): Promise<Caller> => {
    // No environment: only the token given here (none: an anonymous caller).
    const { connection } = await connectClient(
      { address: at, namespace, connectTimeout: '5s', ...(token ? { bearerToken: token } : {}) },
      {},
    );
    opened.push(connection);
    const client = new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) });
    return { connection, client, ...(token ? { token } : {}) };
  };
  const stamp = Date.now().toString(36);
  const probeQueue = `authz-check-${stamp}`;
  const tokens = {
    admin: await mint('ops:authz-admin', 'cluster', ['admin']),
    acme: await mint('user:alice', 'acme', ['starter']),
    // Another starter of acme: the one who must not act on alice's runs by starting over them.
    dan: await mint('user:dan', 'acme', ['starter']),
    acmeOperator: await mint('ops:bob', 'acme', ['operator']),
    globex: await mint('user:gina', 'globex', ['starter']),
    worker: await mint('worker:authz-check', 'cluster', [`worker:${probeQueue}`]),
    // An admin's token that expired 20 minutes ago.
    expiredAdmin: await mint('ops:authz-admin', 'cluster', ['admin'], Math.floor(Date.now() / 1000) - 1_800),
  };
  const nobody = await as(undefined);
  const admin = await as(tokens.admin);
  const acme = await as(tokens.acme);
  const dan = await as(tokens.dan);
  const acmeOperator = await as(tokens.acmeOperator);
  const globex = await as(tokens.globex);
  const worker = await as(tokens.worker);

  const runInput = (principal: string, tenant: string): AgentRunInput => ({
    principal: { id: principal, tenant },
    goal: 'authz check: a debit that waits for an approver',
    strategy: 'same_key_replay',
    planner: {
      kind: 'scripted',
      scenario: 'wallet-debit',
      vars: { account: 'acct_1', amount: { minor: 60_000, currency: 'EUR' } },
    },
    deadlineAt: new Date(Date.now() + 5 * 60_000).toISOString(),
  });
  const startRun = (c: Caller, principal: string, tenant: string, n: number) =>
    startAgentRun(c.client, {
      workflowId: `${tenant}:authz-${stamp}-${n}`,
      taskQueue: DEPLOYMENT_TASK_QUEUE,
      input: runInput(principal, tenant),
      // The run's own check: a start token for exactly this run (the frontend checks the connection's token).
      identityToken: (run) => mint(principal, tenant, ['starter'], undefined, { purpose: 'start', run }),
    });
  const terminate = (c: Caller, id: string) =>
    c.connection.workflowService.terminateWorkflowExecution({
      namespace,
      workflowExecution: { workflowId: id },
      reason: 'authz check',
    });
  /** The caller's requestCancel, with a cancel token for that run of the caller's own principal. */
  const requestCancel = async (c: Caller, who: readonly [string, string, string[]], id: string) =>
    c.client.workflow.getHandle(id).executeUpdate(requestCancelUpdate, {
      args: [{ token: await mint(...who, undefined, { purpose: 'cancel', run: id }), reason: 'authz check' }],
    });
  const alice: [string, string, string[]] = ['user:alice', 'acme', ['starter']];
  const gina: [string, string, string[]] = ['user:gina', 'globex', ['starter']];

  say(`cluster-authz: the frontend at ${address}`);
  say('starting runs as their starters');
  const acme1 = await startRun(acme, 'user:alice', 'acme', 1);
  const acme2 = await startRun(acme, 'user:alice', 'acme', 2);
  const globex1 = await startRun(globex, 'user:gina', 'globex', 1);
  say(`  accepted acme's starter starts ${acme1.workflowId} and ${acme2.workflowId}; globex's ${globex1.workflowId}`);
  await check.refused(`acme's starter starts ${'globex:authz-' + stamp}-9 (another tenant's prefix)`, () =>
    startRun(acme, 'user:alice', 'globex', 9),
  );

  say('terminate: only an admin');
  await check.refused(`no token: terminate ${acme1.workflowId}`, () => terminate(nobody, acme1.workflowId));
  await check.refused(`acme's starter: terminate ${acme1.workflowId}`, () => terminate(acme, acme1.workflowId));
  await check.refused(`acme's operator: terminate ${acme1.workflowId}`, () =>
    terminate(acmeOperator, acme1.workflowId),
  );
  // A token that does not verify fails every call, GetSystemInfo on connecting included.
  await check.refused(`an expired admin token: connect and terminate ${acme1.workflowId}`, async () =>
    terminate(await as(tokens.expiredAdmin), acme1.workflowId),
  );
  await check.accepted(
    `admin: terminate ${acme1.workflowId}`,
    async () => {
      await terminate(admin, acme1.workflowId);
      return (await admin.client.workflow.getHandle(acme1.workflowId).describe()).status.name;
    },
    (status) => (status === 'TERMINATED' ? undefined : `the run is ${status}, not TERMINATED`),
  );
  await check.refused('no token: terminate ledgerloop-quota:acme (empties the rate limit)', () =>
    terminate(nobody, 'ledgerloop-quota:acme'),
  );
  await check.passes('admin: terminate ledgerloop-quota:acme', () => terminate(admin, 'ledgerloop-quota:acme'));

  say('updates: a starter acts on its own tenant’s runs only');
  await check.refused(`acme's starter: requestCancel on ${globex1.workflowId}`, () =>
    requestCancel(acme, alice, globex1.workflowId),
  );
  await check.accepted(
    `acme's starter: requestCancel on ${acme2.workflowId}`,
    () => requestCancel(acme, alice, acme2.workflowId),
    (r) => (r.accepted === true ? undefined : 'the run did not accept it'),
  );
  await check.accepted(
    `globex's starter: requestCancel on ${globex1.workflowId}`,
    () => requestCancel(globex, gina, globex1.workflowId),
    (r) => (r.accepted === true ? undefined : 'the run did not accept it'),
  );

  await checkStarts({
    check,
    namespace,
    taskQueue: DEPLOYMENT_TASK_QUEUE,
    stamp,
    alice: acme,
    dan,
    admin,
    mint,
    runInput,
  });

  say(`workers: a worker:${probeQueue} token polls ${probeQueue} only`);
  const probe = await admin.client.workflow.start('authzProbe', {
    workflowId: `cluster:authz-probe-${stamp}`,
    taskQueue: probeQueue,
    args: [],
  });
  const poll = (c: Caller, queue: string) =>
    c.connection.withDeadline(Date.now() + 20_000, () =>
      c.connection.workflowService.pollWorkflowTaskQueue({
        namespace,
        taskQueue: { name: queue },
        identity: 'cluster-authz-check',
      }),
    );
  await check.refused(`worker:${probeQueue}: poll ${DEPLOYMENT_TASK_QUEUE}`, () => poll(worker, DEPLOYMENT_TASK_QUEUE));
  await check.accepted(
    `worker:${probeQueue}: poll ${probeQueue}`,
    () => poll(worker, probeQueue),
    (r) =>
      r.workflowExecution?.workflowId === probe.workflowId && (r.taskToken?.length ?? 0) > 0
        ? undefined
        : 'no workflow task of the probe came back',
  );
  await terminate(admin, probe.workflowId);

  say('the Web UI: a viewer through its gateway; nothing without a token');
  await check.accepted('no token: GetSystemInfo', () => nobody.connection.workflowService.getSystemInfo({}));
  await check.refused('no token: list runs', () =>
    nobody.connection.workflowService.listWorkflowExecutions({ namespace }),
  );
  if (state?.gateway) {
    const ui = await as(undefined, state.gateway);
    await check.accepted(
      `the UI gateway (${state.gateway}): list runs`,
      () => ui.connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 5 }),
      (r) => (Array.isArray(r.executions) ? undefined : 'no executions field'),
    );
    await check.refused(`the UI gateway: terminate ${acme2.workflowId}`, () => terminate(ui, acme2.workflowId));
  } else check.fail('the UI gateway', 'not in the cluster state (is `cluster up` running?)');
  // The frontend's HTTP API runs the same authorizer.
  const http = `http://127.0.0.1:${(state?.ports ?? clusterPorts(portOffsetFromEnv())).frontendHttp}/api/v1/namespaces/${namespace}/workflows`;
  const viewerToken = await mint('ops:authz-viewer', 'cluster', ['viewer']);
  const get = async (token?: string): Promise<number> =>
    (await fetch(http, token ? { headers: { authorization: `Bearer ${token}` } } : {})).status;
  const anonymousHttp = await get();
  if (anonymousHttp === 403) say(`  refused  no token: GET ${http}: 403`);
  else check.fail(`no token: GET ${http}`, `${anonymousHttp}, not 403`);
  await check.accepted(
    `a viewer: GET ${http}`,
    () => get(viewerToken),
    (code) => (code === 200 ? undefined : `HTTP ${code}`),
  );
  for (const c of opened) await c.close().catch(() => undefined);
  say(
    `cluster-authz: ${check.failures === 0 ? 'every refusal and every control as expected' : `${check.failures} line(s) not as expected`} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  return check.failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`cluster-authz: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
