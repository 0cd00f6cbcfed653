/**
 * An approval after continue-as-new, on the time-skipping test server: the continued run still knows the identity
 * it was started under (carried with its state), so the run's own principal cannot approve its call even though it
 * holds the approver role, and another approver can.
 */
import { generateCapabilityTrust } from '../../src/policy/capability-keys';
import { staticIdentitySource } from '../../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { DownstreamClient } from '../../src/downstream/client';
import type { AdminClient } from '../../services/admin-client';
import { Policy } from '../../src/policy/policy-format';
import { StaticPolicyStore } from '../../src/policy/policy-store';
import { createTimeSkippingEnv } from '../../src/server/time-skipping';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { writeWorkflowBundle } from '../../src/worker/bundle';
import type { agentRun } from '../../workflows/agent-run.workflow';
import {
  decideApprovalUpdate,
  ledgerQuery,
  pendingApprovalsQuery,
  type PendingApproval,
} from '../../workflows/definitions';
import { labScriptedModel } from '../../lab/scenarios';
import { quietRuntime } from '../helpers/stack';

jest.setTimeout(60_000);

let env: TestWorkflowEnvironment;
let wallet: SpawnedService;
let walletClient: AdminClient;
let bundlePath: string;
const trust = generateCapabilityTrust();
const capabilityKey = trust.dispatch;
let issuer: DevIssuer;

beforeAll(async () => {
  quietRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-approval-can-'));
  [env, wallet, bundlePath] = await Promise.all([
    createTimeSkippingEnv(),
    spawnService('wallet', { dbPath: path.join(dir, 'wallet.db'), env: { ...trust.serviceEnv } }),
    writeWorkflowBundle(path.join(dir, 'bundle.js')),
  ]);
  walletClient = spawnedClient(wallet, { capabilityKey, signs: 'lookups' });
  issuer = await createDevIssuer(path.join(dir, 'identity'));
  await walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
});
afterAll(async () => {
  await wallet?.stop();
  await env?.teardown();
});

const policy = Policy.parse({
  version: 'acme-rl/1',
  approvalTtlMs: 10_000,
  rules: [
    {
      action: 'wallet.debit',
      maxAmountMinor: 100_000,
      approvalOverMinor: 50_000,
      rateLimit: { max: 1, perMs: 60_000, per: 'run' },
    },
  ],
});

test('after continue-as-new the run still knows who started it: its own principal may not approve, another may', async () => {
  const taskQueue = `expiry-can-${Date.now()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities: createActivities({
      models: [labScriptedModel()],
      services: { wallet: new DownstreamClient({ baseUrl: wallet.url }) },
      workerIdentity: 'expiry-test',
      authorize: { policies: new StaticPolicyStore(policy), capabilityKey },
      identity: { issuers: staticIdentitySource([issuer.config]) },
    }),
  });
  await worker.runUntil(async () => {
    const workflowId = `expiry-can-${Date.now()}`;
    const handle = await env.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue,
      workflowId,
      args: [
        {
          principal: { id: 'user:alice', tenant: 'acme' },
          identityToken: await issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
          goal: 'two debits',
          strategy: 'same_key_replay',
          planner: {
            kind: 'scripted',
            scenario: 'two-debits',
            vars: {
              account: 'acct_1',
              amount: { minor: 1_100, currency: 'EUR' },
              amount2: { minor: 60_000, currency: 'EUR' },
            },
          },
          // Small enough that the run continues as new after its first turn, before the second debit asks.
          budgets: { maxHistoryEvents: 10 },
          // The test server's clock, which the test before this one moved far ahead.
          deadlineAt: new Date((await env.currentTimeMs()) + 24 * 3600_000).toISOString(),
        },
      ],
    });
    let pending: PendingApproval | undefined;
    for (let i = 0; i < 200 && pending === undefined; i++) {
      pending = (await handle.query(pendingApprovalsQuery).catch(() => []))[0];
      if (pending === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    const snap = await handle.query(ledgerQuery);
    expect(snap.events[0]?.type).toBe('LedgerCarriedForward');
    const decide = async (principal: string) =>
      handle.executeUpdate(decideApprovalUpdate, {
        args: [
          {
            logicalCallId: pending!.logicalCallId,
            argumentsHash: pending!.argumentsHash,
            policyVersion: pending!.policyVersion,
            token: await issuer.issueFor(
              { purpose: 'approve', run: workflowId, call: pending!.logicalCallId },
              principal,
              'acme',
              ['approver'],
            ),
            decision: 'approve',
            ttlMs: 120_000,
          },
        ],
      });
    // alice holds the approver role too, and started this run: refused, typed.
    await expect(decide('user:alice')).rejects.toMatchObject({ cause: { type: 'Actor.Forbidden' } });
    // The control: carol, another approver, is accepted, and the debit is dispatched once.
    await expect(decide('manager:carol')).resolves.toMatchObject({ accepted: true, approver: 'manager:carol' });
    const result = await handle.result();
    expect(result.stopReason).toBe('completed');
    expect((await walletClient.stats(result.calls.at(-1)!.operationKey!)).businessEffectCount).toBe(1);
  });
}, 180_000);
