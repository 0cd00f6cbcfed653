/**
 * Records replay fixtures: runs real scenarios on a dev server and writes each history as JSON under
 * test/replay/histories/<folder>/ (default `baseline`). A release records its baseline once, covering every path
 * docs/versioning.md lists (`BASELINE_PATHS`, test/replay/baseline-paths.ts); a patch records its own folder
 * (`patches/<patch-id>`), kept for the window the document sets and removed with the patch.
 *
 *   node -r tsx/cjs scripts/record-histories.ts [folder]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { connectNative, serverTarget } from '../host/server/connection-config';
import { createActivities } from '../activities';
import type { WorkflowHandle } from '@temporalio/client';
import { readLedger, startAgentRun } from '../host/client/runs';
import {
  decideApprovalUpdate,
  pendingApprovalsQuery,
  requestCancelUpdate,
  resolveCallUpdate,
  type PendingApproval,
} from '../workflows/definitions';
import { staticIdentitySource } from '../src/identity/config';
import { runOpeningFailure } from '../lab/demo/opening-failure';
import { startStack, type Stack } from '../lab/stack';
import { spawnedClient, spawnService } from '../services/spawn';
import { DownstreamClient } from '../src/downstream/client';
import type { AgentRunInput } from '../src/domain/run';
import { REPO_ROOT } from '../host/worker/bundle';
import { labScriptedModel } from '../lab/scenarios';
import { DEFAULT_POLICY, Policy } from '../src/domain/policy-format';
import { StaticPolicyStore } from '../src/stores/policy-store';
import { QuotaStore } from '../src/stores/quota-store';
import { SqliteQuotaBackend } from '../src/stores/quota-store-sqlite';
import { BASELINE_PATHS } from '../test/replay/baseline-paths';

async function until(probe: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > end) throw new Error('record-histories: timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Approve or deny the `nth` approval request of the run (counting ApprovalRequested events). */
async function decide(
  stack: Stack,
  h: WorkflowHandle,
  nth: number,
  decision: 'approve' | 'deny',
  ttlMs?: number,
): Promise<void> {
  let pending: PendingApproval | undefined;
  await until(async () => {
    const requested = (await readLedger(h)).events.filter((e) => e.type === 'ApprovalRequested').length;
    pending = requested >= nth ? (await h.query(pendingApprovalsQuery))[0] : undefined;
    return pending !== undefined;
  });
  const p = pending!;
  // The approver is a verified token of the stack's development issuer (role `approver`).
  const scope = { purpose: 'approve', run: h.workflowId, call: p.logicalCallId } as const;
  const token = await stack.identity.issueFor(scope, 'manager:carol', 'acme', ['approver']);
  await h.executeUpdate(decideApprovalUpdate, {
    args: [
      {
        logicalCallId: p.logicalCallId,
        argumentsHash: p.argumentsHash,
        policyVersion: p.policyVersion,
        token,
        decision,
        ...(ttlMs ? { ttlMs } : {}),
      },
    ],
  });
}

/** A recorder worker of its own on `tq`, reaching only the wallet at `walletUrl`, signing with `authorize`'s key (if any). */
async function walletWorker(
  stack: Stack,
  tq: string,
  walletUrl: string,
  authorize: { capabilityKey?: Stack['capabilityKey']; policies?: StaticPolicyStore },
): Promise<Worker> {
  return Worker.create({
    connection: (await connectNative(serverTarget(stack.server))).connection,
    taskQueue: tq,
    workflowBundle: { codePath: stack.bundlePath },
    activities: createActivities({
      models: [labScriptedModel()],
      services: { wallet: new DownstreamClient({ baseUrl: walletUrl, timeoutMs: 2_000 }) },
      workerIdentity: authorize.capabilityKey ? 'recorder' : 'recorder-without-key',
      authorize,
      identity: { issuers: staticIdentitySource([stack.identity.config]) },
    }),
  });
}

/**
 * The operator path: a wallet of its own commits the debit and is stopped, so reconciliation cannot answer and
 * the run waits for an operator; the wallet comes back on the same port and database, and the operator's claim
 * (SUCCEEDED, with the receipt the wallet holds) is checked by lookup before it is recorded.
 */
async function recordOperatorResolution(
  stack: Stack,
  base: (over: Partial<AgentRunInput>) => AgentRunInput,
  save: (name: string, workflowId: string) => Promise<void>,
  stamp: number,
  resolve: boolean,
): Promise<void> {
  const name = resolve ? 'operator-resolved' : 'outcome-unknown-at-deadline';
  const dbPath = path.join(stack.dataDir, `record-${name}-${stamp}.db`);
  let wallet = await spawnService('wallet', { dbPath, env: { ...stack.capabilityTrust.serviceEnv } });
  const port = Number(new URL(wallet.url).port);
  const admin = spawnedClient(wallet);
  await admin.seedAccount({ tenant: 'acme', account: 'acct_op', balanceMinor: 10_000, currency: 'EUR' });
  await admin.armFault({ at: 'after_commit', do: 'delay', ms: 60_000, path: '/v1/debits' });
  const tq = `record-${name}-${stamp}`;
  const worker = await walletWorker(stack, tq, wallet.url, { capabilityKey: stack.capabilityKey });
  const workflowId = `record-${name}`;
  try {
    await worker.runUntil(async () => {
      const input = base({
        strategy: 'check_receipt',
        planner: {
          kind: 'scripted',
          scenario: 'wallet-debit',
          vars: { account: 'acct_op', amount: { minor: 900, currency: 'EUR' } },
        },
        caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000, abortGraceMs: 5_000 },
        limits: { tool: 2, reconcile: 2, compensation: 2 },
        // Left to its deadline, the run stops outcome_unknown and names the effect it leaves standing.
        ...(resolve ? {} : { deadlineAt: new Date(Date.now() + 25_000).toISOString() }),
      });
      const handle = await startAgentRun(stack.client, {
        workflowId,
        taskQueue: tq,
        input,
        identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
      });
      let key = '';
      await until(async () => {
        const e = (await readLedger(handle)).events.find((x) => x.type === 'DispatchIntentRecorded');
        key = e?.type === 'DispatchIntentRecorded' ? e.intent.operationKey : '';
        return key !== '' && (await admin.stats(key)).businessEffectCount === 1;
      });
      await wallet.stop(); // the effect exists, and now nobody can say so
      await until(async () => (await readLedger(handle)).projection.status === 'waiting_for_operator', 90_000);
      if (!resolve) {
        await handle.result();
        return;
      }
      wallet = await spawnService('wallet', { dbPath, port, env: { ...stack.capabilityTrust.serviceEnv } });
      const found = await spawnedClient(wallet, { capabilityKey: stack.capabilityKey }).lookup(key, { tenant: 'acme' });
      const receipt = found.kind === 'found' ? found.record.receipt : undefined;
      const id = Object.keys((await readLedger(handle)).projection.calls)[0]!;
      await handle.executeUpdate(resolveCallUpdate, {
        args: [
          {
            logicalCallId: id,
            outcome: 'SUCCEEDED',
            token: await stack.identity.issueFor({ purpose: 'resolve', run: workflowId, call: id }, 'ops:bob', 'acme', [
              'operator',
            ]),
            reason: 'the wallet statement shows the debit',
            ...(receipt ? { receipt } : {}),
          },
        ],
      });
      await handle.result();
    });
  } finally {
    await wallet.stop();
  }
  await save(name, workflowId);
}

/**
 * A stop at the deadline with an effect standing: one debit per ten minutes per run, so the run's second debit
 * would wait past its deadline; the run stops `deadline_exceeded` and offsets the first debit.
 */
async function recordDeadlineAfterEffect(
  stack: Stack,
  base: (over: Partial<AgentRunInput>) => AgentRunInput,
  save: (name: string, workflowId: string) => Promise<void>,
  stamp: number,
): Promise<void> {
  const policy = Policy.parse({
    ...DEFAULT_POLICY,
    version: 'record-rate-limited/1',
    rules: DEFAULT_POLICY.rules.map((r) =>
      r.action === 'wallet.debit' ? { ...r, rateLimit: { max: 1, perMs: 600_000, per: 'run' } } : r,
    ),
  });
  const tq = `record-deadline-${stamp}`;
  const worker = await walletWorker(stack, tq, stack.wallet.url, {
    capabilityKey: stack.capabilityKey,
    policies: new StaticPolicyStore(policy),
  });
  const workflowId = 'record-deadline-after-effect';
  await worker.runUntil(async () => {
    const handle = await startAgentRun(stack.client, {
      workflowId,
      taskQueue: tq,
      input: base({
        planner: { kind: 'scripted', scenario: 'endless-debits', vars: { account: 'acct_fx' } },
        deadlineAt: new Date(Date.now() + 30_000).toISOString(),
      }),
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    await handle.result();
  });
  await save('deadline-after-effect', workflowId);
}

/**
 * A worker that holds no signing key sends a debit the wallet refuses (`Capability.Rejected`) on the call's only
 * attempt; the call ends FAILED without reconciliation.
 */
async function recordProvenUnsent(
  stack: Stack,
  base: (over: Partial<AgentRunInput>) => AgentRunInput,
  save: (name: string, workflowId: string) => Promise<void>,
  stamp: number,
): Promise<void> {
  const tq = `record-unsent-${stamp}`;
  const worker = await walletWorker(stack, tq, stack.wallet.url, {});
  const workflowId = 'record-proven-unsent';
  await worker.runUntil(async () => {
    const handle = await startAgentRun(stack.client, {
      workflowId,
      taskQueue: tq,
      input: base({}),
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    await handle.result();
  });
  await save('proven-unsent', workflowId);
}

async function main(): Promise<void> {
  const folder = process.argv[2] ?? 'baseline';
  if (!/^(baseline|patches\/[a-z0-9-]+)$/.test(folder))
    throw new Error(`the folder is \`baseline\` or \`patches/<patch-id>\`; got ${JSON.stringify(folder)}`);
  const dir = path.join(REPO_ROOT, 'test', 'replay', 'histories', folder);
  mkdirSync(dir, { recursive: true });
  const stack = await startStack({
    name: 'record',
    server: { headless: true },
    services: ['inventory', 'shipping', 'orders'],
  });
  const recorded: string[] = [];
  const save = async (name: string, workflowId: string): Promise<void> => {
    recorded.push(name);
    const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(path.join(dir, `${name}.json`), `${historyToJSON(history)}\n`);
    console.log(`recorded ${name} (${history.events?.length ?? 0} events)`);
  };
  try {
    const stamp = Date.now();
    for (const strategy of ['check_receipt', 'same_key_replay'] as const) {
      const row = await runOpeningFailure(stack, {
        strategy,
        taskQueue: `record-${strategy}-${stamp}`,
        workflowId: `record-opening-${strategy}`,
      });
      await save(`opening-failure-${strategy}`, row.workflowId);
    }
    const tq = `record-inproc-${stamp}`;
    const { connection } = await connectNative(serverTarget(stack.server));
    const worker = await Worker.create({
      connection,
      taskQueue: tq,
      workflowBundle: { codePath: stack.bundlePath },
      activities: createActivities({
        models: [labScriptedModel()],
        // A short client timeout, so a response the wallet holds back counts as lost (the re-authorization path).
        services: Object.fromEntries(
          Object.entries(stack.serviceUrls).map(([k, url]) => [
            k,
            new DownstreamClient({ baseUrl: url, timeoutMs: 2_000 }),
          ]),
        ),
        workerIdentity: 'recorder',
        authorize: { capabilityKey: stack.capabilityKey },
        quota: { store: new QuotaStore(new SqliteQuotaBackend(stack.quotaDb)) },
        identity: { issuers: staticIdentitySource([stack.identity.config]) },
      }),
    });
    const base = (over: Partial<AgentRunInput>): AgentRunInput => ({
      principal: { id: 'user:alice', tenant: 'acme' },
      goal: 'fixture',
      strategy: 'same_key_replay',
      planner: {
        kind: 'scripted',
        scenario: 'wallet-debit',
        vars: { account: 'acct_fx', amount: { minor: 1250, currency: 'EUR' } },
      },
      deadlineAt: new Date(Date.now() + 60_000).toISOString(),
      ...over,
    });
    await stack.walletClient.seedAccount({
      tenant: 'acme',
      account: 'acct_fx',
      balanceMinor: 1_000_000,
      currency: 'EUR',
    });
    await worker.runUntil(async () => {
      const runs: Array<[string, AgentRunInput, (() => Promise<unknown>)?, ((h: WorkflowHandle) => Promise<void>)?]> = [
        [
          'lost-response-same-key',
          base({}),
          () => stack.walletClient.armFault({ at: 'after_commit', do: 'drop_response', path: '/v1/debits' }),
        ],
        ['rejected-malformed', base({ planner: { kind: 'scripted', scenario: 'malformed-arguments' } })],
        [
          'denied-over-limit',
          base({ planner: { kind: 'scripted', scenario: 'over-limit-debit', vars: { account: 'acct_fx' } } }),
        ],
        [
          'turn-budget',
          base({
            planner: { kind: 'scripted', scenario: 'endless-debits', vars: { account: 'acct_fx' } },
            budgets: { maxTurns: 2 },
          }),
        ],
        [
          'saga-compensated',
          base({
            planner: {
              kind: 'scripted',
              scenario: 'order-fulfilment',
              vars: {
                sku: 'SKU-FX',
                quantity: 1,
                account: 'acct_fx',
                amount: { minor: 900, currency: 'EUR' },
                orderId: 'ord-fx',
                address: { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' },
              },
            },
          }),
          async () => {
            const s = stack.services;
            await s.inventory!.client.request('POST', '/admin/stock', { tenant: 'acme', sku: 'SKU-FX', onHand: 5 });
            await s.orders!.client.request('POST', '/admin/orders', {
              tenant: 'acme',
              orderId: 'ord-fx',
              customerEmail: 'ada@example.com',
            });
            await s.shipping!.client.request('POST', '/admin/capacity', { remaining: 0 });
          },
        ],
      ];
      // Approvals, re-authorization, continue-as-new with a saga, cancellation, compensation at a stop, repeated
      // intents, the budget; the operator's paths and the deadline are recorded below.
      const big = (account = 'acct_fx') => ({
        kind: 'scripted' as const,
        scenario: 'wallet-debit',
        vars: { account, amount: { minor: 60_000, currency: 'EUR' } },
      });
      runs.push(
        ['approval-granted', base({ planner: big() }), undefined, (h) => decide(stack, h, 1, 'approve')],
        ['approval-denied', base({ planner: big() }), undefined, (h) => decide(stack, h, 1, 'deny')],
        [
          'reauthorized-after-lost-response',
          base({ planner: big(), caps: { toolAttemptMs: 3_000 } }),
          () =>
            stack.walletClient.armFault({ at: 'after_commit', do: 'delay', ms: 6_000, path: '/v1/debits', times: 1 }),
          async (h) => {
            await decide(stack, h, 1, 'approve', 3_000);
            await decide(stack, h, 2, 'deny');
          },
        ],
        [
          'approval-lapsed-renewed',
          base({ planner: big(), caps: { toolAttemptMs: 3_000 } }),
          () =>
            stack.walletClient.armFault({ at: 'after_commit', do: 'delay', ms: 6_000, path: '/v1/debits', times: 1 }),
          async (h) => {
            await decide(stack, h, 1, 'approve', 3_000);
            await decide(stack, h, 2, 'approve');
          },
        ],
        [
          'model-failed-after-effect',
          base({
            planner: {
              kind: 'scripted',
              scenario: 'debit-then-silence',
              vars: { account: 'acct_fx', amount: { minor: 333, currency: 'EUR' } },
            },
          }),
        ],
        [
          'saga-across-continue-as-new',
          base({
            planner: { kind: 'scripted', scenario: 'endless-debits', vars: { account: 'acct_fx' } },
            budgets: { maxTurns: 4, maxHistoryEvents: 30 },
          }),
        ],
        [
          'cancelled-after-effect',
          base({
            planner: { kind: 'scripted', scenario: 'endless-debits', vars: { account: 'acct_fx' } },
            budgets: { maxTurns: 64 },
            deadlineAt: new Date(Date.now() + 600_000).toISOString(),
          }),
          undefined,
          async (h) => {
            await until(async () => (await readLedger(h)).events.some((e) => e.type === 'ToolResultRecorded'));
            // A verified cancel request (the run's own principal), recorded in CancellationRequested.
            await h.executeUpdate(requestCancelUpdate, {
              args: [
                {
                  token: await stack.identity.issueFor({ purpose: 'cancel', run: h.workflowId }, 'user:alice', 'acme'),
                  reason: 'fixture',
                },
              ],
            });
          },
        ],
        [
          'repeated-intent',
          base({
            planner: {
              kind: 'scripted',
              scenario: 'repeat-debit',
              vars: { account: 'acct_fx', amount: { minor: 777, currency: 'EUR' } },
            },
          }),
        ],
        [
          'parallel-over-budget',
          base({
            planner: { kind: 'scripted', scenario: 'parallel-debits', vars: { account: 'acct_fx', count: 4 } },
            budgets: { maxToolCalls: 2 },
          }),
        ],
        ['identity-refused', base({})],
        // The first planning turn verifies the token: a token for another tenant is refused there, before any
        // model call; a first model call that fails leaves the run to verify the token on its own.
        ['identity-mismatch', base({})],
        ['opening-model-failed', base({ planner: { kind: 'scripted', scenario: 'no-such-scenario', vars: {} } })],
      );
      for (const [name, input, arm, during] of runs) {
        if (arm) await arm();
        const workflowId = `record-${name}`;
        // Every run carries its principal's token; `identity-refused` carries none and is denied at start.
        const identityToken =
          name === 'identity-refused'
            ? undefined
            : await stack.identity.issueFor(
                { purpose: 'start', run: workflowId },
                input.principal.id,
                name === 'identity-mismatch' ? 'globex' : input.principal.tenant,
              );
        const handle = await startAgentRun(stack.client, {
          workflowId,
          taskQueue: tq,
          input,
          ...(identityToken ? { identityToken } : {}),
        });
        if (during) await during(handle);
        await handle.result().catch(() => undefined);
        await stack.walletClient.clearFaults();
        await save(name, workflowId);
      }
    });
    await recordOperatorResolution(stack, base, save, stamp, true);
    await recordOperatorResolution(stack, base, save, stamp, false);
    await recordDeadlineAfterEffect(stack, base, save, stamp);
    await recordProvenUnsent(stack, base, save, stamp);
  } finally {
    await stack.stop();
  }
  const missing = folder === 'baseline' ? BASELINE_PATHS.filter((p) => !recorded.includes(p.fixture)) : [];
  if (missing.length > 0) throw new Error(`the baseline misses ${missing.map((p) => p.fixture).join(', ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
