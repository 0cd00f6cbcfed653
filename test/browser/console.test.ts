/**
 * The operator console in a real browser (Debian's Chromium through playwright-core): carol approves a pending
 * debit and sees the run complete; bob looks an UNKNOWN call up and resolves it, and sees the ledger change;
 * alice, an approver too, tries to approve her own call and is shown the run's typed refusal; a viewer sees
 * every item and is offered no action. Screenshots go to test-results/, or to docs/images/ (committed) with
 * LEDGERLOOP_SCREENSHOTS=docs; they show no secret: tokens stay on the server, the page carries none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
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
});

afterAll(async () => {
  await browser?.close();
  await consoleServer?.close();
  for (const w of workers) w.worker.shutdown();
  await Promise.all(workers.map((w) => w.running));
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
