/**
 * Parallel calls and saga compensation on real services: reserve inventory and debit the wallet succeed,
 * scheduling the shipment fails; the run offsets both effects with new governed effects, each counted once,
 * and never calls it a rollback. A compensation whose response is lost is reconciled; one that cannot be
 * settled stops the run for an operator.
 */
import type { Stack } from '../../lab/stack';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(180_000);
let stack: Stack;
const T = 'acme';
beforeAll(async () => {
  stack = await startTestStack('saga', { services: ['inventory', 'shipping', 'orders'] });
});
afterAll(async () => {
  await stack?.stop();
});

const svc = (name: 'wallet' | 'inventory' | 'shipping' | 'orders') => stack.services[name]!.client;
let n = 0;
async function order(opts: { shippingCapacity: number | null }) {
  n += 1;
  const sku = `SKU-${n}`;
  const account = `acct_saga_${n}`;
  const orderId = `ord-${n}`;
  await svc('inventory').request('POST', '/admin/stock', { tenant: T, sku, onHand: 10 });
  await svc('wallet').seedAccount({ tenant: T, account, balanceMinor: 10_000, currency: 'EUR' });
  await svc('orders').request('POST', '/admin/orders', { tenant: T, orderId, customerEmail: 'ada@example.com' });
  await svc('shipping').request('POST', '/admin/capacity', { remaining: opts.shippingCapacity });
  const vars = {
    sku,
    quantity: 2,
    account,
    amount: { minor: 2_500, currency: 'EUR' },
    orderId,
    address: { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' },
  };
  return { sku, account, orderId, vars };
}
const stock = async (sku: string) =>
  svc('inventory').request<{ reserved: number; onHand: number }>('GET', `/v1/stock/${T}/${sku}`);
const effects = async (service: 'wallet' | 'inventory' | 'shipping', key: string) =>
  (await svc(service).stats(key)).businessEffectCount;

function callsByTool(out: Awaited<ReturnType<typeof runAgent>>) {
  return Object.fromEntries(out.result.calls.map((c) => [c.toolName, c]));
}

describe('partial completion of parallel calls', () => {
  test('reserve and debit succeed, shipping fails: both are offset by new effects, each counted once', async () => {
    const o = await order({ shippingCapacity: 0 });
    const out = await runAgent(stack, 'saga', input({ scenario: 'order-fulfilment', vars: o.vars }));
    const calls = callsByTool(out);
    expect(out.result.stopReason).toBe('tool_failed');
    expect(out.result.detail).toContain('compensated, not rolled back');
    expect(calls['shipping_schedule']?.state).toBe('FAILED');
    expect(calls['inventory_reserve']?.state).toBe('SUCCEEDED');
    expect(calls['wallet_debit']?.state).toBe('SUCCEEDED');
    expect(calls['wallet_refund']?.state).toBe('SUCCEEDED');
    expect(calls['inventory_release']?.state).toBe('SUCCEEDED');
    // every effect exactly once, at the downstream's own count
    expect(await effects('wallet', calls['wallet_debit']!.operationKey!)).toBe(1);
    expect(await effects('wallet', calls['wallet_refund']!.operationKey!)).toBe(1);
    expect(await effects('inventory', calls['inventory_reserve']!.operationKey!)).toBe(1);
    expect(await effects('inventory', calls['inventory_release']!.operationKey!)).toBe(1);
    expect((await stack.walletClient.balance(T, o.account))?.minor).toBe(10_000);
    expect((await stock(o.sku)).reserved).toBe(0);
    // compensations were registered before their forward calls were dispatched
    const types = out.ledger.events.map(
      (e) => `${e.type}:${'logicalCallId' in e ? e.logicalCallId : 'forwardCallId' in e ? e.forwardCallId : ''}`,
    );
    const debitId = calls['wallet_debit']!.logicalCallId;
    expect(types.indexOf(`CompensationRegistered:${debitId}`)).toBeLessThan(
      types.indexOf(`ToolAttemptStarted:${debitId}`),
    );
    const completed = out.ledger.events.filter((e) => e.type === 'CompensationCompleted');
    expect(completed.map((e) => ('outcome' in e ? e.outcome : ''))).toEqual(['OFFSET', 'OFFSET']);
    // refunds are compensation-only: this one was authorized at dispatch as the saga's own effect
    expect(
      out.ledger.events.find((e) => e.type === 'AuthorizationAllowed' && e.action === 'wallet.refund'),
    ).toMatchObject({ origin: 'compensation' });
  });

  test('a compensation whose response is lost is reconciled and still refunds once', async () => {
    const o = await order({ shippingCapacity: 0 });
    await stack.walletClient.armFault({ at: 'after_commit', do: 'drop_response', path: '/v1/refunds', occurrence: 1 });
    const out = await runAgent(
      stack,
      'saga-lost',
      input({ scenario: 'order-fulfilment', vars: o.vars, strategy: 'check_receipt' }),
    );
    await stack.walletClient.clearFaults();
    const calls = callsByTool(out);
    expect(calls['wallet_refund']?.state).toBe('SUCCEEDED');
    expect(await effects('wallet', calls['wallet_refund']!.operationKey!)).toBe(1);
    expect((await stack.walletClient.balance(T, o.account))?.minor).toBe(10_000);
    const refundId = calls['wallet_refund']!.logicalCallId;
    expect(out.ledger.events.some((e) => e.type === 'ToolOutcomeMarkedUnknown' && e.logicalCallId === refundId)).toBe(
      true,
    );
    expect(
      out.ledger.events.find((e) => e.type === 'ToolEffectReconciled' && e.logicalCallId === refundId),
    ).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(out.result.stopReason).toBe('tool_failed');
  });

  test('a compensation that cannot be settled stops the run for an operator', async () => {
    const o = await order({ shippingCapacity: 0 });
    await stack.walletClient.armFault({
      at: 'before_commit',
      do: 'error_5xx',
      path: '/v1/refunds',
      occurrence: 1,
      times: 50,
    });
    const out = await runAgent(
      stack,
      'saga-fail',
      input({ scenario: 'order-fulfilment', vars: o.vars, limits: { compensation: 2 } }),
    );
    await stack.walletClient.clearFaults();
    expect(out.result.stopReason).toBe('compensation_failed');
    expect(out.result.detail).toContain('an operator must repair');
    const calls = callsByTool(out);
    expect(calls['wallet_refund']?.state).not.toBe('SUCCEEDED');
    // the debit stays visible as an effect that was not offset; nothing claims it was rolled back
    expect(await effects('wallet', calls['wallet_debit']!.operationKey!)).toBe(1);
    expect((await stack.walletClient.balance(T, o.account))?.minor).toBe(10_000 - 2_500);
    expect(
      out.ledger.events.find(
        (e) => e.type === 'CompensationCompleted' && e.forwardCallId === calls['wallet_debit']!.logicalCallId,
      ),
    ).toMatchObject({ outcome: 'FAILED' });
  });

  test('with every step available the order completes: parallel calls, then the fulfilment', async () => {
    const o = await order({ shippingCapacity: null });
    const out = await runAgent(stack, 'saga-ok', input({ scenario: 'order-fulfilment', vars: o.vars }));
    expect(out.result.stopReason).toBe('completed');
    const calls = callsByTool(out);
    for (const t of ['inventory_reserve', 'wallet_debit', 'shipping_schedule', 'orders_mark_fulfilled'])
      expect(calls[t]?.state).toBe('SUCCEEDED');
    expect(out.ledger.events.some((e) => e.type === 'CompensationStarted')).toBe(false);
  });
});
