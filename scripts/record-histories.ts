/**
 * Records the replay fixtures: runs real scenarios on a dev server and writes each history as JSON under
 * test/replay/histories/<version>/. Fixtures are append-only: add a new version folder for an intended
 * incompatibility instead of overwriting an old one.
 *
 *   node -r tsx/cjs scripts/record-histories.ts [version]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { connectNative, serverTarget } from '../src/server/connection-config';
import { createActivities } from '../activities';
import { startAgentRun } from '../src/client/runs';
import { runOpeningFailure } from '../src/demo/opening-failure';
import { startStack } from '../src/demo/stack';
import { DownstreamClient } from '../src/downstream/client';
import type { AgentRunInput } from '../src/domain/run';
import { REPO_ROOT } from '../src/worker/bundle';

async function main(): Promise<void> {
  const version = process.argv[2] ?? 'v1';
  const dir = path.join(REPO_ROOT, 'test', 'replay', 'histories', version);
  mkdirSync(dir, { recursive: true });
  const stack = await startStack({ name: 'record', server: { headless: true }, services: ['inventory', 'shipping', 'orders'] });
  const save = async (name: string, workflowId: string): Promise<void> => {
    const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(path.join(dir, `${name}.json`), `${historyToJSON(history)}\n`);
    console.log(`recorded ${name} (${history.events?.length ?? 0} events)`);
  };
  try {
    const stamp = Date.now();
    for (const strategy of ['blind_retry', 'check_receipt', 'same_key_replay'] as const) {
      const row = await runOpeningFailure(stack, { strategy, taskQueue: `record-${strategy}-${stamp}`, workflowId: `record-opening-${strategy}` });
      await save(`opening-failure-${strategy}`, row.workflowId);
    }
    const tq = `record-inproc-${stamp}`;
    const { connection } = await connectNative(serverTarget(stack.server));
    const worker = await Worker.create({
      connection,
      taskQueue: tq,
      workflowBundle: { codePath: stack.bundlePath },
      activities: createActivities({
        services: Object.fromEntries(Object.entries(stack.serviceUrls).map(([k, url]) => [k, new DownstreamClient({ baseUrl: url })])),
        workerIdentity: 'recorder',
        authorize: { capabilityKey: stack.capabilityKey },
      }),
    });
    const base = (over: Partial<AgentRunInput>): AgentRunInput => ({
      principal: { id: 'user:alice', tenant: 'acme' },
      goal: 'fixture',
      strategy: 'same_key_replay',
      planner: { kind: 'scripted', scenario: 'wallet-debit', vars: { account: 'acct_fx', amount: { minor: 1250, currency: 'EUR' } } },
      deadlineAt: new Date(Date.now() + 60_000).toISOString(),
      ...over,
    });
    await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_fx', balanceMinor: 100_000, currency: 'EUR' });
    await worker.runUntil(async () => {
      const runs: Array<[string, AgentRunInput, (() => Promise<unknown>)?]> = [
        ['lost-response-same-key', base({}), () => stack.walletClient.armFault({ at: 'after_commit', do: 'drop_response', path: '/v1/debits' })],
        ['rejected-malformed', base({ planner: { kind: 'scripted', scenario: 'malformed-arguments' } })],
        ['denied-over-limit', base({ planner: { kind: 'scripted', scenario: 'over-limit-debit', vars: { account: 'acct_fx' } } })],
        ['turn-budget', base({ planner: { kind: 'scripted', scenario: 'endless-debits', vars: { account: 'acct_fx' } }, budgets: { maxTurns: 2 } })],
        [
          'saga-compensated',
          base({
            planner: {
              kind: 'scripted',
              scenario: 'order-fulfilment',
              vars: { sku: 'SKU-FX', quantity: 1, account: 'acct_fx', amount: { minor: 900, currency: 'EUR' }, orderId: 'ord-fx', address: { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' } },
            },
          }),
          async () => {
            const s = stack.services;
            await s.inventory!.client.request('POST', '/admin/stock', { tenant: 'acme', sku: 'SKU-FX', onHand: 5 });
            await s.orders!.client.request('POST', '/admin/orders', { tenant: 'acme', orderId: 'ord-fx', customerEmail: 'ada@example.com' });
            await s.shipping!.client.request('POST', '/admin/capacity', { remaining: 0 });
          },
        ],
      ];
      for (const [name, input, arm] of runs) {
        if (arm) await arm();
        const workflowId = `record-${name}`;
        const handle = await startAgentRun(stack.client, { workflowId, taskQueue: tq, input });
        await handle.result();
        await stack.walletClient.clearFaults();
        await save(name, workflowId);
      }
    });
  } finally {
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
