/**
 * Against the REAL provider, only when the environment has OPENAI_API_KEY (OPENAI_BASE_URL optional). Uses a
 * cheap model (LEDGERLOOP_OPENAI_MODEL, default gpt-4o-mini) and asserts only what a live model cannot make
 * flaky: the run ends with one of the typed stop reasons, and the key never enters history.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import type { Stack } from '../../lab/stack';
import type { StopReason } from '../../src/domain/run';
import { createOpenAIClient } from '../../src/planner/openai-planner';
import { input } from '../helpers/run';
import { startTestStack } from '../helpers/stack';
import { runWithModel } from '../support/model-run';

const STOP_REASONS: readonly StopReason[] = [
  'completed',
  'budget_exhausted',
  'deadline_exceeded',
  'tool_failed',
  'authorization_denied',
  'outcome_unknown',
  'operator_stopped',
  'model_failed',
];
const apiKey = process.env.OPENAI_API_KEY;
const liveModel = process.env.LEDGERLOOP_OPENAI_MODEL || 'gpt-4o-mini';

jest.setTimeout(180_000);

if (!apiKey) {
  test.skip('a live OpenAI run ends with a typed stop reason (skipped: OPENAI_API_KEY is not set)', () => undefined);
} else {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startTestStack('openai-live');
    await stack.walletClient.seedAccount({
      tenant: 'acme',
      account: 'acct_live',
      balanceMinor: 10_000,
      currency: 'EUR',
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test(`a live ${liveModel} run ends with a typed stop reason`, async () => {
    // Built as the worker builds it: key and base URL from the environment, maxRetries 0.
    const client = createOpenAIClient({
      apiKey,
      ...(process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}),
    });
    const transcriptDb = path.join(mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-live-')), 'transcripts.db');
    const out = await runWithModel(
      stack,
      'openai-live',
      input({
        goal: 'Charge 12.50 EUR (1250 minor units) to account acct_live for order 1001, then reply with one short sentence.',
        planner: { kind: 'openai', model: liveModel, temperature: 0, maxOutputTokens: 300 },
        budgets: { maxTurns: 4, maxToolCalls: 2 },
        caps: { modelAttemptMs: 30_000, toolAttemptMs: 5_000 },
      }),
      { client, transcriptDb },
    );
    expect(STOP_REASONS).toContain(out.result.stopReason);
    expect(JSON.stringify(await out.handle.fetchHistory())).not.toContain(apiKey);
  });
}
