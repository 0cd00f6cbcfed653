/**
 * A rolling upgrade under a running agent (docs/versioning.md), on any Temporal server a stack runs on (the dev
 * server, the cluster). Two Worker Deployment versions of one deployment serve one task queue: 1.0.0 (today's
 * workflow) and 1.0.1 (lab/versioning/next-version.ts, a change that breaks the replay of 1.0.0's histories).
 *
 * 1. 1.0.0 is current; run A starts a 600 EUR debit and waits for an approval.
 * 2. 1.0.1 starts and becomes current; run B starts and completes on it.
 * 3. A is approved and completes on 1.0.0, where it started (pinned); its history does not replay on 1.0.1.
 *
 * Every sentence it prints is read from the server: each run's deployment version and behavior, its stop reason,
 * and the wallet's effects.
 */
import path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { AgentRunInput } from '../../src/domain/run';
import { writeWorkflowBundle } from '../../host/worker/bundle';
import { packageModule } from '../../src/package-paths';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../../workflows/definitions';
import { spawnWorker, type WorkerProcess } from '../spawn-worker';
import type { Stack } from '../stack';

export interface UpgradeRun {
  readonly run: 'A' | 'B';
  readonly workflowId: string;
  readonly startedOn: string;
  readonly finishedOn: string;
  readonly behavior: string;
  readonly stopReason: string;
  readonly effects: number;
}

export interface UpgradeReport {
  readonly deployment: string;
  readonly runs: readonly UpgradeRun[];
  /** Whether run A's history replays on 1.0.1: it must not, so pinning is what kept it whole. */
  readonly aReplaysOnNext: boolean;
  /** Contradictions with the promise; empty when the upgrade went as it should. */
  readonly violations: readonly string[];
}

const OLD = '1.0.0';
const NEW = '1.0.1';

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`rolling upgrade: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Make `buildId` the deployment's current version, once its workers have registered it with the server. */
async function makeCurrent(client: Client, deploymentName: string, buildId: string): Promise<void> {
  const service = client.connection.workflowService;
  const namespace = client.options.namespace;
  await until(
    () =>
      service
        .describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId } })
        .then(() => true),
    `version ${buildId} to register`,
  );
  await service.setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId, identity: 'rolling-upgrade' });
}

/** The deployment version and behavior the server records for a run. */
async function versionOf(handle: WorkflowHandle): Promise<{ buildId: string; behavior: string }> {
  const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
  const buildId = info?.deploymentVersion?.buildId ?? '(none)';
  const behavior = info?.behavior === 1 ? 'PINNED' : info?.behavior === 2 ? 'AUTO_UPGRADE' : 'UNSPECIFIED';
  return { buildId, behavior };
}

export async function runRollingUpgrade(
  stack: Stack,
  opts: { readonly dir: string; readonly say?: (line: string) => void },
): Promise<UpgradeReport> {
  const say = opts.say ?? (() => {});
  const stamp = Date.now().toString(36);
  const deployment = `ledgerloop-upgrade-${stamp}`;
  const taskQueue = `upgrade-${stamp}`;
  const account = `acct_up${stamp}`;
  await stack.walletClient.seedAccount({ tenant: 'acme', account, balanceMinor: 1_000_000, currency: 'EUR' });
  const nextBundle = await writeWorkflowBundle(path.join(opts.dir, 'next-version.js'), {
    workflowsPath: packageModule('lab', 'versioning', 'next-version'),
  });
  const workers: WorkerProcess[] = [];
  const worker = async (buildId: string, bundle: string): Promise<void> => {
    const spawned = await spawnWorker({
      address: stack.server.address,
      taskQueue,
      services: { wallet: stack.wallet.url },
      workflowBundlePath: bundle,
      env: { ...stack.workerEnv, LEDGERLOOP_DEPLOYMENT: deployment, LEDGERLOOP_BUILD_ID: buildId },
    });
    workers.push(spawned);
    say(`worker ${spawned.pid} serves ${deployment} ${buildId}`);
  };
  const input = (minor: number): AgentRunInput => ({
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: `debit ${minor / 100} EUR`,
    strategy: 'check_receipt',
    planner: { kind: 'scripted', scenario: 'wallet-debit', vars: { account, amount: { minor, currency: 'EUR' } } },
    deadlineAt: new Date(Date.now() + 300_000).toISOString(),
  });
  const start = (run: 'A' | 'B', minor: number) =>
    startAgentRun(stack.client, {
      workflowId: `acme:upgrade-${run}-${stamp}`,
      taskQueue,
      input: input(minor),
      identityToken: (id) => stack.identity.issueFor({ purpose: 'start', run: id }, 'user:alice', 'acme'),
    });
  try {
    await worker(OLD, stack.bundlePath);
    await makeCurrent(stack.client, deployment, OLD);
    say(`${OLD} is current`);
    const a = await start('A', 60_000);
    const pending = await until(async () => (await a.query(pendingApprovalsQuery))[0], 'run A to ask for approval');
    const aStartedOn = (await versionOf(a)).buildId;
    say(`run A (${a.workflowId}) started on ${aStartedOn} and waits for an approval`);

    await worker(NEW, nextBundle);
    await makeCurrent(stack.client, deployment, NEW);
    say(`${NEW} is current`);
    const b = await start('B', 1_250);
    const bResult = await b.result();
    const bVersion = await versionOf(b);
    say(`run B (${b.workflowId}) ran on ${bVersion.buildId}: ${bResult.stopReason}`);

    await a.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          logicalCallId: pending.logicalCallId,
          argumentsHash: pending.argumentsHash,
          policyVersion: pending.policyVersion,
          token: await stack.identity.issueFor(
            { purpose: 'approve', run: a.workflowId, call: pending.logicalCallId },
            'manager:carol',
            'acme',
            ['approver'],
          ),
          decision: 'approve',
          reason: 'rolling upgrade',
        },
      ],
    });
    const aResult = await a.result();
    const aVersion = await versionOf(a);
    say(`run A approved; it finished on ${aVersion.buildId} (${aVersion.behavior}): ${aResult.stopReason}`);

    const effectsOf = async (h: WorkflowHandle) => {
      const key = Object.values((await readLedger(h)).projection.calls)[0]?.operationKey ?? '';
      return key === '' ? 0 : (await stack.walletClient.stats(key)).businessEffectCount;
    };
    const runs: UpgradeRun[] = [
      {
        run: 'A',
        workflowId: a.workflowId,
        startedOn: aStartedOn,
        finishedOn: aVersion.buildId,
        behavior: aVersion.behavior,
        stopReason: aResult.stopReason,
        effects: await effectsOf(a),
      },
      {
        run: 'B',
        workflowId: b.workflowId,
        startedOn: bVersion.buildId,
        finishedOn: bVersion.buildId,
        behavior: bVersion.behavior,
        stopReason: bResult.stopReason,
        effects: await effectsOf(b),
      },
    ];
    const aReplaysOnNext = await Worker.runReplayHistory(
      { workflowBundle: { codePath: nextBundle } },
      await a.fetchHistory(),
    )
      .then(() => true)
      .catch(() => false);
    const violations = [
      ...(runs[0]!.startedOn !== OLD || runs[0]!.finishedOn !== OLD ? [`run A did not stay on ${OLD}`] : []),
      ...(runs[1]!.startedOn !== NEW ? [`run B did not start on ${NEW}`] : []),
      ...runs.filter((r) => r.behavior !== 'PINNED').map((r) => `run ${r.run} is ${r.behavior}, not PINNED`),
      ...runs.filter((r) => r.stopReason !== 'completed').map((r) => `run ${r.run} stopped ${r.stopReason}`),
      ...runs.filter((r) => r.effects !== 1).map((r) => `run ${r.run} made ${r.effects} effects, not 1`),
      ...(aReplaysOnNext ? [`run A's history replays on ${NEW}: the change was not a breaking one`] : []),
    ];
    return { deployment, runs, aReplaysOnNext, violations };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}
