/**
 * The operator console in a real browser (Debian's Chromium through playwright-core): carol approves a pending
 * debit and sees the run complete; bob looks an UNKNOWN call up and resolves it, and sees the ledger change;
 * alice, an approver too, tries to approve her own call and is shown the run's typed refusal; a viewer sees
 * every item and is offered no action; a governed AI SDK session (examples/refund-ai-sdk, the team's own workflow
 * type) shows its over-100-EUR refund in the same inbox, where the customer's approval is refused and an
 * approver's is accepted. Screenshots go to test-results/, or to docs/images/ (committed) with
 * LEDGERLOOP_SCREENSHOTS=docs; they show no secret: tokens stay on the server, the page carries none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { startPaymentsService, type PaymentsService } from '../../examples/refund-ai-sdk/src/payments/payments-service';
import { createGovernedRefundWorker } from '../../examples/refund-ai-sdk/src/governed/worker';
import type { governedRefundAgent } from '../../examples/refund-ai-sdk/src/governed/workflows';
import { scriptedRefundProvider } from '../../examples/refund-ai-sdk/src/scripted-model';
import type { Stack } from '../../lab/stack';
import type { RunningConsole } from '../../console/server';
import { readLedger, startAgentRun } from '../../host/client/runs';
import { REPO_ROOT } from '../../host/server/temporal-binaries';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { pendingApprovalsQuery } from '../../workflows/definitions';
import { deadlineIn, inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';
import { input } from '../helpers/run';
import { startTestConsole, waitFor } from '../helpers/console';

jest.setTimeout(240_000);

const CHROMIUM = process.env.LEDGERLOOP_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** docs/images/ (committed) with LEDGERLOOP_SCREENSHOTS=docs; else test-results/, so a test run changes no tracked file. */
const IMAGES =
  process.env.LEDGERLOOP_SCREENSHOTS === 'docs'
    ? path.join(REPO_ROOT, 'docs', 'images')
    : path.join(REPO_ROOT, 'test-results');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

let stack: Stack;
let browser: Browser;
let consoleServer: RunningConsole;
const workers: { worker: Worker; running: Promise<void> }[] = [];
let wallet: SpawnedService | undefined;
let approvalRun: WorkflowHandle;
let unknownRun: WorkflowHandle;
let payments: PaymentsService;
let governedRun: WorkflowHandle<typeof governedRefundAgent>;
let governedConnection: NativeConnection | undefined;

async function worker(services?: Record<string, string>): Promise<string> {
  const tq = taskQueue('console-ui');
  const w = await inProcessWorker(stack, tq, services);
  workers.push({ worker: w, running: w.run() });
  return tq;
}

const token = (principal: string, roles: string[] = []) => stack.identity.issue(principal, 'acme', roles);

async function signedIn(principal: string, roles: string[], viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(consoleServer.signInLink(await token(principal, roles)));
  await page.getByTestId('who').waitFor();
  expect(page.url()).toBe(`${consoleServer.url}/`); // no code, no token in the URL after sign-in
  return page;
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(IMAGES, `console-${name}.png`), fullPage: false });
const card = (page: Page, workflowId: string) => page.getByTestId('item').filter({ hasText: workflowId });

beforeAll(async () => {
  fs.accessSync(CHROMIUM, fs.constants.X_OK);
  fs.mkdirSync(IMAGES, { recursive: true });
  stack = await startTestStack('console-ui');
  await stack.walletClient.seedAccount({
    tenant: 'acme',
    account: 'acct_1',
    balanceMinor: 10_000_000,
    currency: 'EUR',
  });
  consoleServer = await startTestConsole(stack);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });

  // Alice's 600.00 EUR debit waits for an approver.
  approvalRun = await startAgentRun(stack.client, {
    workflowId: `ui-approve-${Date.now()}`,
    taskQueue: await worker(),
    input: input({
      vars: { account: 'acct_1', amount: { minor: 60_000, currency: 'EUR' } },
      deadlineAt: deadlineIn(600_000), // room for a loaded machine: the approval waits until the deadline less its reserve
    }),
    identityToken: (run) => stack.identity.issueFor({ purpose: 'start', run }, 'user:alice', 'acme'),
  });
  await waitFor(async () => ((await approvalRun.query(pendingApprovalsQuery)).length ? true : undefined));

  // A debit the wallet commits, then nobody can say so: the call is UNKNOWN and the run waits for an operator.
  const dbPath = path.join(stack.dataDir, `ui-doomed-${Date.now()}.db`);
  const env = { ...stack.capabilityTrust.serviceEnv };
  const doomed = await spawnService('wallet', { dbPath, env });
  const doomedClient = spawnedClient(doomed, { capabilityKey: stack.capabilityKey });
  await doomedClient.seedAccount({ tenant: 'acme', account: 'acct_9', balanceMinor: 100_000, currency: 'EUR' });
  await doomedClient.armFault({ at: 'after_commit', do: 'delay', ms: 60_000, path: '/v1/debits' });
  unknownRun = await startAgentRun(stack.client, {
    workflowId: `ui-unknown-${Date.now()}`,
    taskQueue: await worker({ wallet: doomed.url }),
    input: input({
      strategy: 'check_receipt',
      vars: { account: 'acct_9', amount: { minor: 4_200, currency: 'EUR' } },
      deadlineAt: deadlineIn(600_000), // room for a loaded machine: the approval waits until the deadline less its reserve
      caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000 },
      limits: { tool: 2, reconcile: 2 },
    }),
    identityToken: (run) => stack.identity.issueFor({ purpose: 'start', run }, 'user:alice', 'acme'),
  });
  await waitFor(async () => {
    const stats = await doomedClient.stats('', { prefix: true });
    return stats.businessEffectCount === 1 ? true : undefined;
  });
  await doomed.stop();
  await waitFor(
    async () => ((await readLedger(unknownRun)).projection.status === 'waiting_for_operator' ? true : undefined),
    60_000,
  );
  // The wallet is back: a lookup can now answer (the run still waits for a person).
  wallet = await spawnService('wallet', { dbPath, port: Number(new URL(doomed.url).port), env });

  // A governed AI SDK session (the team's own workflow type, governedRefundAgent): alice's 180.00 EUR refund waits.
  payments = await startPaymentsService(path.join(stack.dataDir, `ui-payments-${Date.now()}.db`));
  payments.seedOrder({ orderId: 'ord-ui', customer: 'user:alice', amountMinor: 250_00, currency: 'EUR' });
  governedConnection = await NativeConnection.connect({ address: stack.server.address });
  const governedTq = taskQueue('console-governed');
  const governed = await createGovernedRefundWorker({
    connection: governedConnection,
    taskQueue: governedTq,
    paymentsUrl: payments.url,
    modelProvider: scriptedRefundProvider(),
    capabilityKey: stack.capabilityKey,
    identityIssuers: [stack.identity.config],
    extra: {
      namespace: stack.server.namespace,
      maxCachedWorkflows: 0,
      ...(stack.dataConverter ? { dataConverter: stack.dataConverter } : {}),
    },
  });
  workers.push({ worker: governed, running: governed.run() });
  const governedId = `ui-governed-${Date.now()}`;
  governedRun = await stack.client.workflow.start<typeof governedRefundAgent>('governedRefundAgent', {
    taskQueue: governedTq,
    workflowId: governedId,
    args: [
      {
        principal: { id: 'user:alice', tenant: 'acme' },
        identityToken: await stack.identity.issueFor({ purpose: 'start', run: governedId }, 'user:alice', 'acme'),
        message: 'refund order ord-ui: 180.00 EUR, never arrived',
        deadlineAt: deadlineIn(600_000),
      },
    ],
  });
  await waitFor(async () => ((await governedRun.query(pendingApprovalsQuery)).length ? true : undefined));
});

afterAll(async () => {
  await browser?.close();
  await consoleServer?.close();
  for (const w of workers) w.worker.shutdown();
  await Promise.all(workers.map((w) => w.running));
  await governedConnection?.close();
  await payments?.close();
  await wallet?.stop();
  await stack?.stop();
});

test('a viewer sees every item and is offered no action', async () => {
  const page = await signedIn('audit:vera', ['viewer']);
  await card(page, approvalRun.workflowId).waitFor();
  await card(page, unknownRun.workflowId).waitFor();
  expect(await page.locator('form.action').count()).toBe(0);
  expect(await page.getByRole('button', { name: /approve|resolve|settle|look it up/i }).count()).toBe(0);
  await expect(card(page, approvalRun.workflowId).textContent()).resolves.toContain('no action is offered');
  await shot(page, 'viewer');
  await page.context().close();
});

test('alice, an approver too, tries to approve her own call and is shown the run’s typed refusal', async () => {
  const page = await signedIn('user:alice', ['approver']);
  const item = card(page, approvalRun.workflowId);
  await item.locator('textarea[name="reason"]').fill('I need this');
  await item.getByRole('button', { name: 'Approve' }).click();
  const refusal = item.getByTestId('refusal');
  await refusal.waitFor();
  expect(await refusal.textContent()).toMatch(/^Actor\.Forbidden .*user:alice may not approve or deny its own call/);
  await shot(page, 'self-approval');
  expect((await approvalRun.query(pendingApprovalsQuery)).length).toBe(1); // nothing was decided
  await page.context().close();
});

test('carol, on a phone, approves the pending debit and sees the run complete', async () => {
  const page = await signedIn('manager:carol', ['approver'], PHONE);
  const item = card(page, approvalRun.workflowId);
  await item.waitFor();
  expect(await item.locator('.amount').textContent()).toBe('600.00 EUR');
  await item.locator('textarea[name="reason"]').fill('order 1001, checked with the customer');
  await shot(page, 'inbox-phone');
  // A slow answer, as on a loaded machine: the server has decided and the live inbox has dropped the item before
  // the page hears back. The confirmation must still reach carol, so the answer is held for longer than the 5 s a
  // confirmation is kept.
  await page.route('**/api/runs/*/approve', async (route) => {
    const answer = await route.fetch();
    await waitFor(
      async () => ((await approvalRun.query(pendingApprovalsQuery)).length === 0 ? true : undefined),
      60_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await route.fulfill({ response: answer });
  });
  await item.getByRole('button', { name: 'Approve' }).click();
  // The answer, whichever it is (a refusal would name itself here): on a loaded machine the update can take a while.
  const answered = item.getByTestId('done').or(item.getByTestId('refusal'));
  await answered.waitFor({ timeout: 90_000 });
  expect(await answered.textContent()).toContain('approved');
  // The live inbox drops the item without a reload.
  await card(page, approvalRun.workflowId).waitFor({ state: 'detached', timeout: 30_000 });
  await page.setViewportSize(DESKTOP);
  await page.goto(`${consoleServer.url}/runs/${encodeURIComponent(approvalRun.workflowId)}`);
  await page.getByTestId('stop-reason').filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
  expect(await page.getByTestId('timeline').textContent()).toContain('approved by manager:carol');
  expect(await page.getByTestId('calls').textContent()).toContain('SUCCEEDED');
  await shot(page, 'run');
  await page.context().close();
});

test('bob looks the UNKNOWN call up, resolves it with the receipt the wallet holds, and sees the ledger change', async () => {
  const page = await signedIn('ops:bob', ['operator']);
  const item = card(page, unknownRun.workflowId);
  await item.waitFor();
  await item.getByRole('button', { name: 'Look it up now' }).click();
  const answer = item.getByTestId('done');
  await answer.waitFor({ timeout: 60_000 });
  const receipt = /receipt (\S+)/.exec((await answer.textContent()) ?? '')?.[1];
  expect(receipt).toBeDefined();
  await item.locator('select[name="outcome"]').selectOption('SUCCEEDED');
  await item.locator('input[name="receipt"]').fill(receipt!);
  await item.locator('textarea[name="reason"]').fill('the wallet holds the debit under its key');
  await item.getByRole('button', { name: 'Resolve' }).click();
  await item.getByTestId('done').filter({ hasText: 'resolved SUCCEEDED' }).waitFor({ timeout: 60_000 });
  await page.goto(`${consoleServer.url}/runs/${encodeURIComponent(unknownRun.workflowId)}`);
  const timeline = page.getByTestId('timeline');
  await timeline.locator('[data-type="ToolEffectReconciled"]').waitFor();
  expect(await timeline.textContent()).toContain('via operator');
  expect(await timeline.textContent()).toContain('verified: ops:bob');
  await page.getByTestId('stop-reason').filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
  await shot(page, 'resolved');
  await page.context().close();
});

test('a governed AI SDK session’s pending refund is in the inbox: the customer is refused, an approver approves it', async () => {
  // alice holds the approver role and is the customer: the session's policy refuses her, nothing is decided.
  const alice = await signedIn('user:alice', ['approver']);
  const mine = card(alice, governedRun.workflowId);
  await mine.waitFor();
  expect(await mine.textContent()).toContain('refund ord-ui 18000 EUR'); // the declaration's summary
  await mine.locator('textarea[name="reason"]').fill('my own refund');
  await mine.getByRole('button', { name: 'Approve' }).click();
  await mine.getByTestId('refusal').waitFor();
  expect(await mine.getByTestId('refusal').textContent()).toMatch(/own call/);
  expect(await governedRun.query(pendingApprovalsQuery)).toHaveLength(1);
  expect(payments.refunds()).toEqual([]);
  await alice.context().close();
  // Control: dana, another verified approver, approves it in the same inbox, and the refund is issued once.
  const dana = await signedIn('manager:dana', ['approver']);
  const item = card(dana, governedRun.workflowId);
  await item.waitFor();
  await item.locator('textarea[name="reason"]').fill('parcel lost, checked with the carrier');
  await item.getByRole('button', { name: 'Approve' }).click();
  const answered = item.getByTestId('done').or(item.getByTestId('refusal'));
  await answered.waitFor({ timeout: 90_000 });
  expect(await answered.textContent()).toContain('approved');
  const result = await governedRun.result();
  expect(result.stopReason).toBe('completed');
  expect(payments.refunds()).toEqual([expect.objectContaining({ orderId: 'ord-ui', amountMinor: 180_00 })]);
  // The session's run page reads it as any run's: the approval by dana in the timeline, the stop.
  await dana.goto(`${consoleServer.url}/runs/${encodeURIComponent(governedRun.workflowId)}`);
  await dana.getByTestId('stop-reason').filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
  expect(await dana.getByTestId('timeline').textContent()).toContain('approved by manager:dana');
  await shot(dana, 'governed-session');
  await dana.context().close();
});
