/**
 * The Temporal Web UI shows Ledgerloop's encrypted runs in plaintext, decoded through our codec server.
 *
 * This file starts its own dev server WITH the Web UI (`--ui-codec-endpoint` pointing at a codec server it starts),
 * runs one demo-like agent run (scripted planner, scenario `wallet-debit`) with payload encryption on, then drives
 * Debian's Chromium (`/usr/bin/chromium`, through playwright-core; no browser is downloaded) to the run's history
 * page and checks that the decoded activity summary and the decoded input are on the page. Screenshots go to
 * `test-results/ui-<name>.png`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startCodecServer, type CodecServer } from '../../host/codec/codec-server';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { startStack, type Stack } from '../../lab/stack';
import { DevServerStartError, getFreePort } from '../../host/server/dev-server';
import { REPO_ROOT } from '../../host/server/temporal-binaries';
import { input, runAgent, type RunOutcome } from '../helpers/run';
import { installRuntimeLogger } from '../../src/observability/logger';

jest.setTimeout(180_000);

const CHROMIUM = process.env.LEDGERLOOP_CHROMIUM ?? '/usr/bin/chromium';
/** The flags that work on this kind of machine (closed network, root, no GPU). Playwright adds --headless. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');

const ACCOUNT = `acct_ui${Date.now().toString(36)}`;
const SUMMARY = new RegExp(`wallet_debit ${ACCOUNT} 12\\.50 EUR · lc_\\w+ · op_\\w+`);

/** Counts the payloads the codec decodes, so the test can tell the UI really asked the codec server. */
class CountingCodec implements PayloadCodec {
  decoded = 0;
  constructor(private readonly inner: PayloadCodec) {}
  encode(payloads: Payload[]): Promise<Payload[]> {
    return this.inner.encode(payloads);
  }
  decode(payloads: Payload[]): Promise<Payload[]> {
    this.decoded += payloads.length;
    return this.inner.decode(payloads);
  }
}

let stack: Stack | undefined;
let codecServer: CodecServer | undefined;
let browser: BrowserContext | undefined;
let userDataDir: string | undefined;
let outcome: RunOutcome;
let runId: string;
let codec: CountingCodec;

function requireChromium(): void {
  try {
    fs.accessSync(CHROMIUM, fs.constants.X_OK);
  } catch {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. The browser tests drive Debian's chromium package: install it with ` +
        '`apt-get install -y chromium` (as root; `bash scripts/ensure-setup.sh` does this), or set LEDGERLOOP_CHROMIUM.',
    );
  }
}

function quietRuntime(): void {
  installRuntimeLogger({ component: 'test', level: 'ERROR', format: 'text' });
}

async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `ui-${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

beforeAll(async () => {
  requireChromium();
  quietRuntime();
  const { keys, keyId } = generateCodecKeys('ui');
  codec = new CountingCodec(codecFromEnv({ LEDGERLOOP_CODEC_KEYS: keys, LEDGERLOOP_CODEC_KEY_ID: keyId })!);
  // The UI's port is picked before the server starts (the codec server must name its origin), so another process
  // can take it in between: on "address already in use" pick again, up to three times.
  for (let attempt = 1; stack === undefined; attempt++) {
    const uiPort = await getFreePort();
    // As the demo runs it (host/codec/demo-codec.ts): the dev server's UI has no sign-in, so no token to forward.
    codecServer = await startCodecServer({
      codec,
      auth: { kind: 'insecure-dev' },
      allowedOrigins: [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`],
    });
    try {
      stack = await startStack({
        name: 'ui',
        dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-ui-')),
        ownServer: true,
        server: { uiPort, uiCodecEndpoint: codecServer.url, ephemeral: true },
        dataConverter: { payloadCodecs: [codec] },
      });
    } catch (err) {
      await codecServer.close();
      codecServer = undefined;
      const portTaken = err instanceof DevServerStartError && /address already in use/i.test(err.logTail);
      if (!portTaken || attempt >= 3) throw err;
    }
  }
  await stack.walletClient.seedAccount({ tenant: 'acme', account: ACCOUNT, balanceMinor: 10_000, currency: 'EUR' });
  outcome = await runAgent(
    stack,
    'ui',
    input({ vars: { account: ACCOUNT, amount: { minor: 1250, currency: 'EUR' } } }),
  );
  runId = (await outcome.handle.describe()).runId;

  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-chromium-'));
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1600, height: 1200 },
  });
});

afterAll(async () => {
  await browser?.close();
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  await stack?.stop();
  await codecServer?.close();
});

test('the run completed with encrypted payloads only the codec can read', async () => {
  expect(outcome.result.calls[0]?.state).toBe('SUCCEEDED');
  const plain = new Client({ connection: stack!.connection, namespace: stack!.server.namespace });
  const history = await plain.workflow.getHandle(outcome.workflowId).fetchHistory();
  const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
  expect(bytes.includes(ACCOUNT)).toBe(false);
  expect(bytes.includes('binary/encrypted')).toBe(true);
});

test('the Web UI history shows the decoded input and activity summary', async () => {
  const page = await browser!.newPage();
  const decodedBefore = codec.decoded;
  const { uiUrl, namespace } = stack!.server;
  await page.goto(
    `${uiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(outcome.workflowId)}/${runId}/history`,
    {
      waitUntil: 'domcontentloaded',
    },
  );
  try {
    // The input panel shows the account id, which the server only holds encrypted.
    const inputPanel = page.getByTestId('input-and-result').filter({ hasText: `"${ACCOUNT}"` });
    await inputPanel.waitFor({ state: 'visible', timeout: 60_000 });
    // The UI reports that its codec server answered.
    await page.getByTestId('data-encoder-status-success').first().waitFor({ state: 'attached', timeout: 10_000 });
    await screenshot(page, 'history');

    // The dispatch's activity summary (user metadata, encrypted too) in the event list; expanded, its input.
    const row = page.getByTestId('event-summary-row').filter({ hasText: SUMMARY }).first();
    await row.waitFor({ state: 'visible', timeout: 30_000 });
    await row.click();
    const details = page.getByTestId('event-summary-row-expanded').filter({ hasText: SUMMARY }).first();
    await details.waitFor({ state: 'visible', timeout: 30_000 });
    await details.getByText(`"${ACCOUNT}"`).first().waitFor({ state: 'visible', timeout: 30_000 });
    await row.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await screenshot(page, 'activity');
  } catch (err) {
    await screenshot(page, 'failure').catch(() => undefined);
    throw err;
  }
  expect(codec.decoded).toBeGreaterThan(decodedBefore);
  await page.close();
});
