/**
 * Function tools on the time-skipping test server, with the real dispatch and reconcile activities, the real
 * recovery table and the real function transport over in-memory SDK-shaped APIs (test/support/transports). The
 * server's clock is the one that passes: a retention of 24 h or an in-flight window of 10 minutes goes by at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { readLedger, startAgentRun } from '../../host/client/runs';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../../workflows/definitions';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { staticIdentitySource } from '../../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { DISCARD_WORKFLOW_SPANS } from '../../src/observability/tracing';
import { scriptedModel } from '../../src/planner/scripted-model';
import { Policy } from '../../src/domain/policy-format';
import type { PolicyStore } from '../../src/stores/policy-store';
import { createTimeSkippingEnv } from '../../host/server/time-skipping';
import { writeWorkflowBundle } from '../../host/worker/bundle';
import type { ToolImplementation } from '../../src/downstream/function-tool';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { faultyTransports, type TransportFault } from '../../lab/faults/transport-faults';
import { quietRuntime } from '../helpers/stack';
import { FakeLedgerApi, FakeMailApi } from '../support/transports/fake-apis';
import { ledgerAndMailFunctions } from '../support/transports/functions';
import { workflowTools } from '../support/transports/workflow-tools';

jest.setTimeout(90_000);

const TOOLS_MODULE = path.resolve(__dirname, '../support/transports/workflow-tools.ts');
const HOUR = 3_600_000;

let env: TestWorkflowEnvironment;
let bundlePath: string;
let issuer: DevIssuer;
let dir: string;

beforeAll(async () => {
  quietRuntime();
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-fn-'));
  [env, bundlePath, issuer] = await Promise.all([
    createTimeSkippingEnv(),
    writeWorkflowBundle(path.join(dir, 'bundle.js'), { toolsModule: TOOLS_MODULE }),
    createDevIssuer(path.join(dir, 'identity')),
  ]);
});
afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const policy = (version: string, approveLedger = false): Policy =>
  Policy.parse({
    version,
    rules: [{ action: 'ledger.post', ...(approveLedger ? { approval: 'always' } : {}) }, { action: 'mail.send' }],
  });

/** A policy store the test can switch under a running call. */
class SwitchablePolicy implements PolicyStore {
  constructor(public policy: Policy) {}
  current(): Policy {
    return this.policy;
  }
}

const scenarios = {
  'ledger-post': (v: Readonly<Record<string, unknown>>) => [
    { proposals: [{ name: 'ledger_post', arguments: { account: v.account, amountMinor: v.amountMinor } }] },
    { final: () => 'done' },
  ],
  'mail-send': (v: Readonly<Record<string, unknown>>) => [
    { proposals: [{ name: 'mail_send', arguments: { to: v.to, subject: 'Your receipt' } }] },
    { final: () => 'done' },
  ],
};

interface Outcome {
  readonly result: AgentRunResult;
  readonly ledger: LedgerSnapshot;
}

let runs = 0;

/** One run of `scenario` on a fresh worker; `during` acts on the running workflow (an approver, a clock). */
async function run(opts: {
  scenario: keyof typeof scenarios;
  vars: Record<string, unknown>;
  functions: ToolImplementation[];
  faults?: readonly TransportFault[];
  policies?: PolicyStore;
  deadlineMs?: number;
  during?: (workflowId: string) => Promise<void>;
}): Promise<Outcome> {
  const taskQueue = `fn-tier-${process.pid}-${++runs}`;
  const workflowId = `${taskQueue}-run`;
  const activities = createActivities({
    models: [scriptedModel(scenarios)],
    services: {},
    tools: workflowTools,
    functions: opts.functions,
    secrets: { LEDGER_API_KEY: 'sk_ledger_test_0123456789' },
    ...(opts.faults ? { wrapTransport: faultyTransports(opts.faults, { announce: () => undefined }) } : {}),
    workerIdentity: 'fn-tier',
    identity: { issuers: staticIdentitySource([issuer.config]) },
    authorize: { policies: opts.policies ?? new SwitchablePolicy(policy('fn/1')) },
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities,
    sinks: DISCARD_WORKFLOW_SPANS,
  });
  const input: AgentRunInput = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'post it',
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario: opts.scenario, vars: opts.vars },
    deadlineAt: new Date((await env.currentTimeMs()) + (opts.deadlineMs ?? HOUR)).toISOString(),
    caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000 },
  };
  return worker.runUntil(async () => {
    const handle = await startAgentRun(env.client, {
      workflowId,
      taskQueue,
      input,
      identityToken: await issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    await opts.during?.(workflowId);
    const result = await handle.result();
    return { result, ledger: await readLedger(handle) };
  });
}

const types = (o: Outcome): string[] => o.ledger.events.map((e) => e.type);
const only = (o: Outcome) => o.result.calls[0]!;

describe('a function tool keeps every guarantee of a contract tool', () => {
  test('a lost response after the commit is resent under the same key inside its retention, and posts once', async () => {
    const ledger = new FakeLedgerApi('sk_ledger_test_0123456789');
    const out = await run({
      scenario: 'ledger-post',
      vars: { account: 'acct_1', amountMinor: 1250 },
      functions: ledgerAndMailFunctions(ledger, new FakeMailApi()),
      faults: [{ at: 'after_commit', do: 'drop_response', tool: 'ledger_post' }],
    });
    expect(only(out)).toMatchObject({ state: 'SUCCEEDED' });
    expect(ledger.calls).toBe(2); // the resend reached the ledger ...
    expect(ledger.postings.size).toBe(1); // ... which answered it from its record under the same key
    expect(out.ledger.events.find((e) => e.type === 'ToolResultRecorded')).toMatchObject({ replayed: false });
  });

  test('a function that throws NothingSentError settles FAILED with its code, nothing looked up or resent', async () => {
    const ledger = new FakeLedgerApi('sk_ledger_test_0123456789');
    const out = await run({
      scenario: 'ledger-post',
      vars: { account: 'closed', amountMinor: 1250 },
      functions: ledgerAndMailFunctions(ledger, new FakeMailApi()),
    });
    expect(only(out)).toMatchObject({ state: 'FAILED' });
    expect(out.ledger.projection.calls[only(out).logicalCallId]).toMatchObject({ errorCode: 'Ledger.AccountClosed' });
    expect(types(out)).not.toContain('ToolOutcomeMarkedUnknown');
    expect(ledger.lookups).toBe(0);
  });

  test('any other throw after the function may have acted leaves the call UNKNOWN, and the lookup settles it', async () => {
    const ledger = new FakeLedgerApi('sk_ledger_test_0123456789');
    const [post, mail] = ledgerAndMailFunctions(ledger, new FakeMailApi());
    const throwsAfterPosting: ToolImplementation = {
      ...post!,
      async execute(args, ctx) {
        await post!.execute(args, ctx);
        throw new Error('socket hang up');
      },
    };
    const out = await run({
      scenario: 'ledger-post',
      vars: { account: 'acct_1', amountMinor: 99 },
      functions: [throwsAfterPosting, mail!],
    });
    expect(types(out)).toContain('ToolOutcomeMarkedUnknown');
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(ledger.postings.size).toBe(1);
  });
});

describe('an expired key is never resent', () => {
  /**
   * Attempt 1 posts and loses its response; while it was out the policy changed to require an approval, so attempt
   * 2 sends nothing (the policy at dispatch) and the call is decided again. The approver answers after `wait`.
   */
  async function lostThenReapproved(waitMs: number) {
    const ledger = new FakeLedgerApi('sk_ledger_test_0123456789');
    const policies = new SwitchablePolicy(policy('fn/1'));
    const [post, mail] = ledgerAndMailFunctions(ledger, new FakeMailApi());
    let first = true;
    const postThenLose: ToolImplementation = {
      ...post!,
      async execute(args, ctx) {
        const posted = await post!.execute(args, ctx);
        if (!first) return posted;
        first = false;
        policies.policy = policy('fn/2', true);
        throw new Error('ECONNRESET after the ledger committed');
      },
    };
    const out = await run({
      scenario: 'ledger-post',
      vars: { account: 'acct_1', amountMinor: 700 },
      functions: [postThenLose, mail!],
      policies,
      deadlineMs: 48 * HOUR,
      during: async (workflowId) => {
        const handle = env.client.workflow.getHandle(workflowId);
        let pending = (await handle.query(pendingApprovalsQuery))[0];
        while (pending === undefined) pending = (await handle.query(pendingApprovalsQuery))[0];
        await env.sleep(waitMs);
        await handle.executeUpdate(decideApprovalUpdate, {
          args: [
            {
              logicalCallId: pending.logicalCallId,
              argumentsHash: pending.argumentsHash,
              policyVersion: pending.policyVersion,
              decision: 'approve',
              token: await issuer.issueFor(
                { purpose: 'approve', run: workflowId, call: pending.logicalCallId },
                'manager:carol',
                'acme',
                ['approver'],
              ),
            },
          ],
        });
      },
    });
    return { out, ledger };
  }

  test('the retention passed while the call waited: it is looked up, not resent, and posted once', async () => {
    const { out, ledger } = await lostThenReapproved(25 * HOUR);
    expect(only(out)).toMatchObject({ state: 'SUCCEEDED' });
    expect(ledger.calls).toBe(1); // never sent again
    expect(out.ledger.events.filter((e) => e.type === 'ToolAttemptStarted')).toHaveLength(2);
    expect(
      out.ledger.events.find((e) => e.type === 'ToolOutcomeMarkedUnknown' && e.cause === 'retention_expired'),
    ).toBeDefined();
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({
      via: 'receipt_lookup',
      outcome: 'SUCCEEDED',
    });
  });

  test('the control: inside the retention the same call is resent under the same key, and still posts once', async () => {
    const { out, ledger } = await lostThenReapproved(60_000);
    expect(only(out)).toMatchObject({ state: 'SUCCEEDED' });
    expect(ledger.calls).toBe(2);
    expect(ledger.postings.size).toBe(1);
    expect(types(out)).not.toContain('ToolEffectReconciled');
  });
});

describe('an unsealed not_found is never proof inside the in-flight window', () => {
  test('not found inside the window stays UNKNOWN and is looked up again; the message that landed late is found', async () => {
    const mail = new FakeMailApi();
    mail.holdNext = true;
    const landed = (async () => {
      await mail.nextLookup(); // the retry's lookup before any resend: not found, nothing resent
      await mail.nextLookup(); // the workflow's reconciliation: not found, unsealed, inside the window
      mail.landAll(); // the message that was on the wire arrives
    })();
    const out = await run({
      scenario: 'mail-send',
      vars: { to: 'bob@example.com' },
      functions: ledgerAndMailFunctions(new FakeLedgerApi('x'), mail),
    });
    await landed;
    expect(only(out)).toMatchObject({ state: 'SUCCEEDED' });
    expect(mail.sends).toBe(1);
    expect(types(out)).toContain('AbsenceAwaited');
    expect(out.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(mail.lookups).toBe(3);
  });

  test('the control: nothing lands, and after the window the same not_found settles the call FAILED', async () => {
    const mail = new FakeMailApi();
    mail.holdNext = true;
    const out = await run({
      scenario: 'mail-send',
      vars: { to: 'carol@example.com' },
      functions: ledgerAndMailFunctions(new FakeLedgerApi('x'), mail),
    });
    expect(only(out)).toMatchObject({ state: 'FAILED' });
    expect(mail.sends).toBe(1);
    const awaited = out.ledger.events.find((e) => e.type === 'AbsenceAwaited');
    const settled = out.ledger.events.find((e) => e.type === 'ToolEffectReconciled');
    expect(awaited).toBeDefined();
    expect(settled).toMatchObject({ outcome: 'FAILED', evidence: { lookup: 'absent' } });
    // Settled no earlier than the declared 10 minutes after the last possible send.
    expect(Date.parse(settled!.at) - Date.parse(awaited!.at)).toBeGreaterThanOrEqual(600_000 - 5_000);
    expect(out.ledger.projection.violations).toEqual([]);
  });
});
