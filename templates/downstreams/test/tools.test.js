// @ts-check
// The project on real processes (scripts/stack.js): a Temporal dev server, a PostgreSQL, the payment provider
// stand-in with its own storage, the team's orders service and a worker. Each tool runs once, then under each
// fault (its response lost after the commit, the worker killed mid-call, the downstream restarted), and every
// effect is counted in the downstream's own storage: the provider's database, the team's `orders` table. What
// follows a lost answer is the tool's own recovery: the provider's tools are resent under the same key (the
// provider answers from its key record), the orders tool speaks Ledgerloop's contract and is looked up by its key,
// never resent. It needs a PostgreSQL (DATABASE_URL, else the server binaries on this machine) and fails, naming
// both, without one.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, afterEach, before, describe, test } = require('node:test');
const { startStack } = require('../scripts/stack');

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
before(async () => {
  stack = await startStack('test');
});
afterEach(async () => {
  await stack?.clearFaults();
});
after(async () => {
  await stack?.stop();
});

/** @typedef {{ state: string, operationKey: string, toolName: string }} Call */

/**
 * Starts a run of `scenario`, waits for its result, and returns it with its one call.
 * @param {string} scenario
 * @param {Record<string, string | number>} vars
 * @param {string[]} [extra]
 * @returns {Promise<{ workflowId: string, result: any, call: Call }>}
 */
async function run(scenario, vars, extra = []) {
  const args = ['start', '--scenario', scenario, ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}=${v}`])];
  const started = await stack.cli([...args, ...extra, '--wait', '--json']);
  assert.equal(started.code, 0, started.err);
  const out = JSON.parse(started.out);
  const calls = /** @type {Call[]} */ (out.result.calls);
  assert.ok(calls.length >= 1, `the run made no call: ${started.out}`);
  return { ...out, call: /** @type {Call} */ (calls[calls.length - 1]) };
}

/**
 * Resolves once the `index`-th fault armed on `service`'s proxy has fired (asked every 20 ms: an event to wait on).
 * @param {'payments' | 'orders'} service
 * @param {number} [index]
 */
async function fired(service, index = 0) {
  while ((stack.fired(service)[index] ?? 0) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * How many `method path` requests the proxy in front of `service` forwarded since the last `clearFaults`.
 * @param {'payments' | 'orders'} service
 * @param {string} method
 * @param {string} path
 */
const sent = (service, method, path) => stack.forwarded(service).get(`${method} ${path}`) ?? 0;

let n = 0;
/** A fresh id for each run, so every count below is of that run's effect alone. */
const fresh = () => `${Date.now().toString(36)}${(n += 1)}`;

/**
 * Each tool: its scenario, the request that commits its effect, what follows a lost answer (`resend`: the same
 * request under the same key; `lookup`: a lookup or seal of the operation by its key, under `lookupPath`), and its effects
 * counted in its downstream's storage.
 * @type {Record<string, { service: 'payments' | 'orders', path: string, recovery: 'resend' | 'lookup', lookupPath?: string, vars(): Promise<Record<string, string | number>>, count(call: Call, vars: Record<string, string | number>): Promise<number> | number }>}
 */
const TOOLS = {
  record_order: {
    service: 'orders',
    path: '/v1/orders',
    recovery: 'lookup',
    lookupPath: '/v1/operations/',
    vars: async () => ({ order: `ord_${fresh()}`, customer: 'cus_alice', minor: 4200 }),
    count: (_call, vars) => stack.orderCount(String(vars.order)),
  },
  charge_card: {
    service: 'payments',
    path: '/v1/charges',
    recovery: 'resend',
    vars: async () => ({ customer: `cus_${fresh()}`, minor: 700 }),
    count: (call) => stack.vendorCount('charges', `ll_${call.operationKey}`),
  },
  refund_charge: {
    service: 'payments',
    path: '/v1/refunds',
    recovery: 'resend',
    // A charge of its own to refund, made first with no fault armed.
    async vars() {
      const { call } = await run('charge', { customer: `cus_${fresh()}`, minor: 900 });
      assert.equal(call.state, 'SUCCEEDED');
      return { minor: 900, chargeOperationKey: call.operationKey };
    },
    count: (call) => stack.vendorCount('refunds', call.operationKey),
  },
};
const SCENARIO = { record_order: 'record-order', charge_card: 'charge', refund_charge: 'refund' };

let checkout = '';

test('a checkout records the order once in the team’s PostgreSQL and charges the card once at the provider', async () => {
  const vars = { order: `ord_${fresh()}`, customer: 'cus_alice', minor: 1250 };
  const { workflowId, result } = await run('checkout', vars);
  assert.equal(result.stopReason, 'completed');
  const calls = /** @type {Call[]} */ (result.calls);
  assert.deepEqual(
    calls.map((c) => [c.toolName, c.state]),
    [
      ['record_order', 'SUCCEEDED'],
      ['charge_card', 'SUCCEEDED'],
    ],
  );
  checkout = workflowId;
  assert.equal(await stack.orderCount(vars.order), 1);
  assert.equal(stack.vendorCount('charges', `ll_${calls[1]?.operationKey}`), 1);
  const shown = await stack.cli(['show', workflowId, '--json']);
  assert.equal(shown.code, 0, shown.err);
  assert.deepEqual(JSON.parse(shown.out).violations, []);
});

test('a principal the policy does not name is refused before anything is sent; the same charge by a user is made', async () => {
  const vars = { customer: `cus_${fresh()}`, minor: 500 };
  const refused = await run('charge', vars, ['--principal', 'service:nightly']);
  assert.equal(refused.call.state, 'FAILED');
  assert.equal(stack.vendorCount('charges', `ll_${refused.call.operationKey}`), 0);
  // The control: the same charge, by a user the policy names, is made.
  const allowed = await run('charge', vars);
  assert.equal(allowed.call.state, 'SUCCEEDED');
  assert.equal(stack.vendorCount('charges', `ll_${allowed.call.operationKey}`), 1);
});

for (const [name, tool] of Object.entries(TOOLS)) {
  const scenario = SCENARIO[/** @type {keyof typeof SCENARIO} */ (name)];
  describe(`${name} under faults`, () => {
    const lost =
      tool.recovery === 'resend'
        ? 'three times: resent under the same key, one effect'
        : 'looked up by its key, never resent, one effect';
    test(`its response lost after the downstream committed, ${lost}`, async () => {
      const vars = await tool.vars();
      stack.arm(tool.service, { at: 'after_response', do: 'drop_response', method: 'POST', path: tool.path, times: 3 });
      const { call } = await run(scenario, vars);
      assert.equal(call.state, 'SUCCEEDED');
      assert.equal(await tool.count(call, vars), 1);
      if (tool.recovery === 'resend') {
        // Three answers lost means three sends reached the provider (a fault fires only on a forwarded request).
        assert.deepEqual(stack.fired(tool.service), [3]);
        return;
      }
      // Armed for three losses, only one fires: the request is never sent again. What answers is one lookup by the
      // key under the lookup route (the kit's lookup or its seal, which answers with the key's row when it exists;
      // the counts are this test's alone).
      assert.deepEqual(stack.fired(tool.service), [1]);
      assert.equal(sent(tool.service, 'POST', tool.path), 1);
      const forwarded = [...stack.forwarded(tool.service)];
      const lookups = forwarded.filter(([what]) =>
        what.split(' ')[1]?.startsWith(`${tool.lookupPath}${call.operationKey}`),
      );
      assert.equal(
        lookups.reduce((sum, [, count]) => sum + count, 0),
        1,
        `one lookup of ${call.operationKey}; forwarded: ${JSON.stringify(forwarded)}`,
      );
    });

    test('the worker killed while the downstream’s answer is held: a new worker settles it, one effect', async () => {
      const vars = await tool.vars();
      stack.arm(tool.service, { at: 'after_response', do: 'delay', method: 'POST', path: tool.path, ms: 3000 });
      const [{ call }] = await Promise.all([
        run(scenario, vars),
        fired(tool.service).then(() => stack.replaceWorker()),
      ]);
      assert.equal(call.state, 'SUCCEEDED');
      assert.equal(await tool.count(call, vars), 1);
    });

    test('the downstream restarted after it committed, before its answer arrived: one effect', async () => {
      const vars = await tool.vars();
      let restarted;
      if (tool.service === 'payments') {
        // The provider's own fault: a SIGKILL of its process right after its commit, then a new process on its database.
        await stack.armVendor({ at: 'after_commit', do: 'kill', path: tool.path });
        restarted = stack.restartVendorWhenItDies();
      } else {
        // The answer is lost after the commit; the reconciliation that follows (its first request, a GET of the
        // service's contract, then the seal of the key) is held until the service was killed and started again on
        // its database, so the restarted process answers it.
        stack.arm('orders', { at: 'after_response', do: 'drop_response', method: 'POST', path: tool.path });
        stack.arm('orders', { at: 'before_forward', do: 'delay', method: 'GET', ms: 5000 });
        restarted = fired('orders', 1).then(() => stack.restartOrders());
      }
      const [{ call }] = await Promise.all([run(scenario, vars), restarted]);
      assert.equal(call.state, 'SUCCEEDED');
      if (tool.service === 'orders') {
        assert.deepEqual(stack.fired('orders'), [1, 1]);
        assert.equal(sent('orders', 'POST', tool.path), 1);
      }
      assert.equal(await tool.count(call, vars), 1);
    });
  });
}

test('the checkout’s history replays against this project’s tools', async () => {
  assert.ok(checkout, 'the first test made a run');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'shop-history-')), 'checkout.json');
  const exported = await stack.cli(['export', checkout, '--out', file]);
  assert.equal(exported.code, 0, exported.err);
  const replayed = await stack.cli(['replay', file]);
  assert.equal(replayed.code, 0, `${replayed.out}\n${replayed.err}`);
});
