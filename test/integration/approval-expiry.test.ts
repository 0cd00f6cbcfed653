/**
 * Approval expiry on the time-skipping test server (a virtual clock): an approval that lapses while the call
 * waits (here behind a policy rate limit) is not used; the call needs a new decision, and only a fresh
 * approval dispatches it, once.
 */
import { generateCapabilityTrust } from '../../src/capability/capability-keys';
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
import { Policy } from '../../src/domain/policy-format';
import { StaticPolicyStore } from '../../src/stores/policy-store';
import { createTimeSkippingEnv } from '../../host/server/time-skipping';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { writeWorkflowBundle } from '../../host/worker/bundle';
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
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-expiry-'));
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

test('an approval that expires while the call waits forces a new decision; a fresh one dispatches once', async () => {
  const taskQueue = `expiry-${Date.now()}`;
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
    const workflowId = `expiry-${Date.now()}`;
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
              amount: { minor: 1_000, currency: 'EUR' },
              amount2: { minor: 60_000, currency: 'EUR' },
            },
          },
          deadlineAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
        },
      ],
    });
    const pending = async (pred: (p: PendingApproval) => boolean): Promise<PendingApproval> => {
      for (let i = 0; i < 200; i++) {
        const found = (await handle.query(pendingApprovalsQuery)).find(pred);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      const desc = await handle.describe();
      const snap = await handle.query(ledgerQuery).catch((e: unknown) => String(e));
      throw new Error(`no pending approval: ${desc.status.name} ${JSON.stringify(snap).slice(0, 3000)}`);
    };
    const first = await pending(() => true);
    // Approved for 10 s, but the rate limit (1 debit per 60 s) holds the dispatch for about a minute.
    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          logicalCallId: first.logicalCallId,
          argumentsHash: first.argumentsHash,
          policyVersion: first.policyVersion,
          token: await issuer.issueFor(
            { purpose: 'approve', run: workflowId, call: first.logicalCallId },
            'manager:carol',
            'acme',
            ['approver'],
          ),
          decision: 'approve',
        },
      ],
    });
    await env.sleep(70_000); // virtual time: the deferred dispatch wakes up after its approval lapsed
    const second = await pending(() => true);
    const requestsBefore = (await walletClient.stats('', { prefix: true })).dispatchCount;
    let snap = await handle.query(ledgerQuery);
    const renewed = snap.events.filter((e) => e.type === 'ApprovalRequested');
    expect(renewed).toHaveLength(2);
    expect(renewed[1] && 'invalidated' in renewed[1] ? renewed[1].invalidated : '').toMatch(/expired/);
    expect(snap.events.some((e) => e.type === 'DispatchDeferred')).toBe(true);
    expect(requestsBefore).toBe(1); // only the first (small) debit reached the wallet so far
    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          logicalCallId: second.logicalCallId,
          argumentsHash: second.argumentsHash,
          policyVersion: second.policyVersion,
          token: await issuer.issueFor(
            { purpose: 'approve', run: workflowId, call: second.logicalCallId },
            'manager:dave',
            'acme',
            ['approver'],
          ),
          decision: 'approve',
          ttlMs: 120_000,
        },
      ],
    });
    const result = await handle.result();
    snap = await handle.query(ledgerQuery);
    expect(result.stopReason).toBe('completed');
    const big = result.calls[1]!;
    expect(big.state).toBe('SUCCEEDED');
    expect((await walletClient.stats(big.operationKey!)).businessEffectCount).toBe(1);
    expect(snap.events.filter((e) => e.type === 'AuthorizationAllowed').pop()).toMatchObject({
      chain: ['user:alice', 'approved-by:manager:dave'],
    });
  });
});
