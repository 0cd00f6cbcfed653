/**
 * A parallel turn whose calls all ask the authorizer at once, one of them needing an approval, must replay: the
 * explorer found (seed 1, case 8) that side-by-side local activities replayed in another order than they ran, so
 * every later workflow task failed with a nondeterminism error and the run never closed. Its calls now share one
 * authorizer call (patch one-authorizer-call).
 */
import { Worker } from '@temporalio/worker';
import type { Stack } from '../../lab/stack';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../../workflows/definitions';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('parallel-replay', { services: ['inventory', 'shipping', 'orders'] });
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
  const s = stack.services;
  await s.inventory!.client.request('POST', '/admin/stock', { tenant: 'acme', sku: 'SKU-1', onHand: 10 });
  await s.orders!.client.request('POST', '/admin/orders', {
    tenant: 'acme',
    orderId: 'ord-1',
    customerEmail: 'ada@example.com',
  });
});
afterAll(async () => {
  await stack?.stop();
});

test('three calls side by side, one needing an approval: the run completes and its history replays', async () => {
  const vars = {
    sku: 'SKU-1',
    quantity: 3,
    account: 'acct_1',
    amount: { minor: 56_798, currency: 'EUR' },
    orderId: 'ord-1',
    address: { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' },
  };
  const out = await runAgent(
    stack,
    'parallel-approval',
    input({
      strategy: 'check_receipt',
      scenario: 'order-fulfilment',
      vars,
      deadlineAt: new Date(Date.now() + 90_000).toISOString(),
    }),
    async (handle) => {
      for (let i = 0; i < 300; i++) {
        const p = await handle.query(pendingApprovalsQuery).catch(() => []);
        if (p.length > 0) {
          await handle.executeUpdate(decideApprovalUpdate, {
            args: [
              {
                logicalCallId: p[0]!.logicalCallId,
                argumentsHash: p[0]!.argumentsHash,
                policyVersion: p[0]!.policyVersion,
                token: await stack.identity.issueFor(
                  { purpose: 'approve', run: handle.workflowId, call: p[0]!.logicalCallId },
                  'manager:carol',
                  'acme',
                  ['approver'],
                ),
                decision: 'approve',
              },
            ],
          });
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('no approval was requested');
    },
  );
  expect(out.result.stopReason).toBe('completed');
  const history = await out.handle.fetchHistory();
  expect(history.events?.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  await expect(
    Worker.runReplayHistory({ workflowBundle: { codePath: stack.bundlePath } }, history, out.workflowId),
  ).resolves.toBeUndefined();
});
