/**
 * A tool on a third-party HTTP API and a function tool over that API's SDK, on real processes: the vendor payments
 * server (its own process and SQLite storage, Stripe's idempotency semantics), a loopback fault proxy in front of it,
 * worker processes of a project that speaks none of Ledgerloop's contract (its config names the tools module, the
 * functions module, the scripted model and the policy), and a real Temporal dev server. Each fault leaves exactly
 * one effect, counted in the vendor's own database, and every history replays.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { readLedger, startAgentRun } from '../../host/client/runs';
import { writeWorkflowBundle } from '../../host/worker/bundle';
import type { AgentRunResult } from '../../src/domain/run';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { spawnWorker, type WorkerProcess } from '../../lab/spawn-worker';
import { startFaultProxy, type FaultProxy, type ProxyFault } from '../../host/testing/http-fault-proxy';
import type { TransportFault } from '../../lab/faults/transport-faults';
import { quietRuntime, taskQueue } from '../helpers/stack';
import { spawnVendor, VENDOR_API_KEY, type Vendor } from '../helpers/vendor';

jest.setTimeout(180_000);

const SUPPORT = path.resolve(__dirname, '../support/transports');
const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';

let dir: string;
let vendor: Vendor;
let proxy: FaultProxy;
let bundlePath: string;
let issuer: DevIssuer;
let configPath: string;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  quietRuntime();
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-transports-'));
  [vendor, bundlePath, issuer] = await Promise.all([
    spawnVendor(dir),
    writeWorkflowBundle(path.join(dir, 'bundle.js'), { toolsModule: path.join(SUPPORT, 'workflow-tools.ts') }),
    createDevIssuer(path.join(dir, 'identity')),
  ]);
  proxy = await startFaultProxy(vendor.url);
  configPath = path.join(dir, 'ledgerloop.config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      tools: path.join(SUPPORT, 'workflow-tools.ts'),
      functions: path.join(SUPPORT, 'payments-functions.ts'),
      model: { kind: 'scripted', scenarios: path.join(SUPPORT, 'payments-scenarios.ts') },
      policy: {
        version: 'transports/1',
        rules: [
          { action: 'payments.charge', maxAmountMinor: 100_000, currency: 'EUR' },
          { action: 'payments.refund', maxAmountMinor: 100_000, currency: 'EUR' },
          { action: 'ledger.post' },
          { action: 'mail.send' },
        ],
      },
      services: { payments: proxy.url },
    }),
  );
  connection = await Connection.connect({ address });
  client = new Client({ connection });
});

afterAll(async () => {
  await proxy?.close();
  await vendor?.stop();
  await connection?.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => proxy.clear());

interface Case {
  readonly scenario: 'charge' | 'refund';
  readonly vars: Record<string, unknown>;
  /** The first worker's crash plan (LEDGERLOOP_CRASH_AT) and transport faults; a second, clean worker takes over. */
  readonly crashAt?: string;
  readonly transportFaults?: readonly TransportFault[];
  readonly proxyFaults?: readonly ProxyFault[];
  /** Runs once the run has started (a downstream restart). */
  readonly during?: () => Promise<void>;
}

async function worker(tq: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  return spawnWorker({
    address,
    taskQueue: tq,
    services: { payments: proxy.url },
    workflowBundlePath: bundlePath,
    maxCachedWorkflows: 0,
    env: {
      LEDGERLOOP_PROJECT_CONFIG: configPath,
      LEDGERLOOP_IDENTITY_ISSUERS: issuer.configPath,
      PAYMENTS_API_KEY: VENDOR_API_KEY,
      PAYMENTS_BASE_URL: vendor.url,
      LEDGER_API_KEY: 'sk_ledger_integration',
      LEDGERLOOP_CRASH_POINTS: '1',
      ...env,
    },
  });
}

async function runCase(c: Case): Promise<{ result: AgentRunResult; ledger: LedgerSnapshot; history: unknown }> {
  const tq = taskQueue('transports');
  const first = await worker(tq, {
    ...(c.crashAt ? { LEDGERLOOP_CRASH_AT: c.crashAt } : {}),
    ...(c.transportFaults ? { LEDGERLOOP_TRANSPORT_FAULTS: JSON.stringify(c.transportFaults) } : {}),
  });
  const killed = c.crashAt !== undefined || c.transportFaults?.some((f) => f.do === 'kill') === true;
  // The clean worker starts once the first one is dead, so the planned kill cannot be dodged by it.
  let second: Promise<WorkerProcess> | undefined;
  if (killed)
    first.child.once('exit', () => {
      second = worker(tq);
    });
  for (const f of c.proxyFaults ?? []) proxy.arm(f);
  try {
    const workflowId = `${tq}-run`;
    const handle = await startAgentRun(client, {
      workflowId,
      taskQueue: tq,
      input: {
        principal: { id: 'user:alice', tenant: 'acme' },
        goal: c.scenario,
        strategy: 'same_key_replay',
        planner: { kind: 'scripted', scenario: c.scenario, vars: c.vars },
        deadlineAt: new Date(Date.now() + 120_000).toISOString(),
      },
      identityToken: await issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    await c.during?.();
    const result = await handle.result();
    if (killed) expect(first.child.signalCode).toBe('SIGKILL');
    const history = await handle.fetchHistory();
    return { result, ledger: await readLedger(handle), history };
  } finally {
    await Promise.all([first.stop(), second?.then((w) => w.stop())]);
  }
}

/** The call's operation key, from the ledger. */
function keyOf(ledger: LedgerSnapshot, tool: string): string {
  const intent = ledger.events.find((e) => e.type === 'DispatchIntentRecorded' && e.intent.toolName === tool);
  if (intent?.type !== 'DispatchIntentRecorded') throw new Error(`no intent of ${tool}`);
  return intent.intent.operationKey;
}

const chargesUnder = (opKey: string) =>
  vendor.count('charges', { metadataKey: 'ledgerloop_key', value: `ll_${opKey}` });
const refundsUnder = (opKey: string) => vendor.count('refunds', { metadataKey: 'ledgerloop_key', value: opKey });

async function replays(history: unknown): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: bundlePath } }, history as never);
}

const charged: string[] = [];

describe('an HTTP tool on a Stripe-style API', () => {
  test('its response lost after the commit three times: the lookup by metadata finds the one charge', async () => {
    const out = await runCase({
      scenario: 'charge',
      vars: { customer: 'cus_lost3', amount: { minor: 1250, currency: 'EUR' } },
      proxyFaults: [{ at: 'after_response', do: 'drop_response', method: 'POST', path: '/v1/charges', times: 3 }],
    });
    const key = keyOf(out.ledger, 'payments_charge');
    expect(out.result.calls[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(proxy.forwarded.get('POST /v1/charges')).toBeGreaterThanOrEqual(3); // every attempt reached the API ...
    expect(chargesUnder(key)).toBe(1); // ... which charged once
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(out.ledger.projection.violations).toEqual([]);
    await replays(out.history);
    charged.push(key);
  });

  test('the worker killed mid-call: a new worker resends under the same key and the API replays the one charge', async () => {
    const out = await runCase({
      scenario: 'charge',
      vars: { customer: 'cus_killed', amount: { minor: 990, currency: 'EUR' } },
      crashAt: 'tool.after_response:1:kill:0',
    });
    const key = keyOf(out.ledger, 'payments_charge');
    expect(out.result.calls[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(chargesUnder(key)).toBe(1);
    await replays(out.history);
    charged.push(key);
  });

  test('the API restarted after it committed and before it answered: still one charge', async () => {
    await vendor.arm({ at: 'after_commit', do: 'kill', path: '/v1/charges' });
    const out = await runCase({
      scenario: 'charge',
      vars: { customer: 'cus_restart', amount: { minor: 700, currency: 'EUR' } },
      during: async () => {
        await new Promise<void>((resolve) => vendor.service.child.once('exit', () => resolve()));
        vendor = await spawnVendor(dir, { port: Number(new URL(vendor.url).port) });
      },
    });
    const key = keyOf(out.ledger, 'payments_charge');
    expect(out.result.calls[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(chargesUnder(key)).toBe(1);
    await replays(out.history);
  });
});

describe('a function tool over the same API through its SDK', () => {
  test('its response lost after the commit three times: the lookup finds the one refund', async () => {
    const out = await runCase({
      scenario: 'refund',
      vars: { amount: { minor: 1250, currency: 'EUR' }, chargeOperationKey: charged[0] },
      transportFaults: [{ at: 'after_commit', do: 'drop_response', tool: 'payments_refund', times: 3 }],
    });
    const key = keyOf(out.ledger, 'payments_refund');
    expect(out.result.calls[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(refundsUnder(key)).toBe(1);
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({ outcome: 'SUCCEEDED' });
    await replays(out.history);
  });

  test('the worker killed after the function committed: a new worker resends under the same key, one refund', async () => {
    const out = await runCase({
      scenario: 'refund',
      vars: { amount: { minor: 990, currency: 'EUR' }, chargeOperationKey: charged[1] },
      transportFaults: [{ at: 'after_commit', do: 'kill', tool: 'payments_refund' }],
    });
    const key = keyOf(out.ledger, 'payments_refund');
    expect(out.result.calls[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(refundsUnder(key)).toBe(1);
    await replays(out.history);
  });
});
