/**
 * An operator who settles a call FAILED late: the run waited for the operator with the turn's other effects
 * standing; once the operator's claim is checked (lookup and seal: no effect) and recorded, those effects are
 * offset as for any failed call (issue #11, defect 2).
 */
import path from 'node:path';
import type { Stack } from '../../lab/stack';
import { spawnService, type SpawnedService } from '../../services/spawn';
import { resolveCallUpdate } from '../../workflows/definitions';
import { input, ledgerWhen, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(180_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('operator-late', { services: ['inventory', 'shipping', 'orders'] });
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
  const s = stack.services;
  await s.inventory!.client.request('POST', '/admin/stock', { tenant: 'acme', sku: 'SKU-L', onHand: 10 });
  await s.orders!.client.request('POST', '/admin/orders', {
    tenant: 'acme',
    orderId: 'ord-late',
    customerEmail: 'ada@example.com',
  });
});
afterAll(async () => {
  await stack?.stop();
});

test('a call the operator settles FAILED after the wait: the turn’s standing effects are offset', async () => {
  // A shipping service of our own that is down when the turn dispatches: its call ends UNKNOWN (no lookup answers).
  const dbPath = path.join(stack.dataDir, `late-shipping-${Date.now()}.db`);
  let shipping: SpawnedService = await spawnService('shipping', {
    dbPath,
    env: { ...stack.capabilityTrust.serviceEnv },
  });
  const port = Number(new URL(shipping.url).port);
  const url = shipping.url;
  await shipping.stop();
  try {
    const vars = {
      sku: 'SKU-L',
      quantity: 1,
      account: 'acct_1',
      amount: { minor: 900, currency: 'EUR' },
      orderId: 'ord-late',
      address: { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' },
    };
    const out = await runAgent(
      stack,
      'operator-late',
      input({
        scenario: 'order-fulfilment',
        vars,
        caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000 },
        limits: { tool: 2, reconcile: 2 },
        deadlineAt: new Date(Date.now() + 120_000).toISOString(),
      }),
      async (handle) => {
        const snap = await ledgerWhen(handle, (l) => l.projection.status === 'waiting_for_operator');
        const unknown = Object.values(snap.projection.calls).find((c) => c.state === 'UNKNOWN');
        expect(unknown?.toolName).toBe('shipping_schedule');
        // The service is back (same port, same database): the operator's claim can be checked.
        shipping = await spawnService('shipping', { dbPath, port, env: { ...stack.capabilityTrust.serviceEnv } });
        await handle.executeUpdate(resolveCallUpdate, {
          args: [
            {
              logicalCallId: unknown!.logicalCallId,
              outcome: 'FAILED',
              token: await stack.identity.issueFor(
                { purpose: 'resolve', run: handle.workflowId, call: unknown!.logicalCallId },
                'ops:bob',
                'acme',
                ['operator'],
              ),
              reason: 'the carrier never received the booking',
            },
          ],
        });
      },
      { services: { ...stack.serviceUrls, shipping: url } },
    );
    expect(out.result.stopReason).toBe('tool_failed');
    const calls = Object.values(out.ledger.projection.calls).filter((c) => c.origin === 'model' && c.turn === 1);
    const byTool = Object.fromEntries(calls.map((c) => [c.toolName, c]));
    expect(byTool['shipping_schedule']?.state).toBe('FAILED');
    expect(byTool['wallet_debit']?.compensation).toBe('OFFSET');
    expect(byTool['inventory_reserve']?.compensation).toBe('OFFSET');
    // The stop names what the saga offset, each call with its tool.
    expect(out.result.detail).toContain(`${byTool['wallet_debit']?.logicalCallId} (wallet_debit)`);
    expect(out.result.detail).toContain(`${byTool['inventory_reserve']?.logicalCallId} (inventory_reserve)`);
  } finally {
    await shipping.stop();
  }
});
