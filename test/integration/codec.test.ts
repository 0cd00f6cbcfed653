/**
 * Payload encryption on a real dev server: what the server stores is ciphertext (a plain client without the codec
 * sees `binary/encrypted` payloads that do not contain the account id or the goal), the encrypted run behaves as
 * usual, and the codec server turns the stored payloads back into plaintext, as the Web UI would ask it to.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { payloadToJson, startCodecServer, type CodecServer, type JsonPayload } from '../../host/codec/codec-server';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import type { Stack } from '../../lab/stack';
import { input, runAgent, type RunOutcome } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);

const ACCOUNT = 'acct_codec_7731';
const GOAL = 'Charge 12.50 EUR for order 1001 (codec test)';
const { keys, keyId } = generateCodecKeys('itest');
const codec = codecFromEnv({ LEDGERLOOP_CODEC_KEYS: keys, LEDGERLOOP_CODEC_KEY_ID: keyId })!;

const CODEC_TOKEN = randomBytes(24).toString('hex');

let stack: Stack;
let codecServer: CodecServer;
let outcome: RunOutcome;
let history: temporal.api.history.v1.IHistory;

beforeAll(async () => {
  stack = await startTestStack('codec', { dataConverter: { payloadCodecs: [codec] } });
  codecServer = await startCodecServer({ codec, auth: { kind: 'bearer', tokens: [CODEC_TOKEN] } });
  await stack.walletClient.seedAccount({ tenant: 'acme', account: ACCOUNT, balanceMinor: 10_000, currency: 'EUR' });
  outcome = await runAgent(
    stack,
    'codec',
    input({ goal: GOAL, vars: { account: ACCOUNT, amount: { minor: 1250, currency: 'EUR' } } }),
  );
  // A client with no codec: what anyone with access to the server (or its database) sees.
  const plainClient = new Client({ connection: stack.connection, namespace: stack.server.namespace });
  history = await plainClient.workflow.getHandle(outcome.workflowId).fetchHistory();
});
afterAll(async () => {
  await codecServer?.close();
  await stack?.stop();
});

function startedInput(): Payload[] {
  const started = history.events?.find((e) => e.workflowExecutionStartedEventAttributes);
  return (started?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []) as Payload[];
}

function dispatchSummary(): Payload {
  const scheduled = history.events?.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dispatchTool',
  );
  expect(scheduled?.userMetadata?.summary).toBeDefined();
  return scheduled!.userMetadata!.summary as Payload;
}

async function decodeViaServer(payloads: Payload[]): Promise<string[]> {
  const res = await fetch(`${codecServer.url}/decode`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Namespace': stack.server.namespace,
      Authorization: `Bearer ${CODEC_TOKEN}`,
    },
    body: JSON.stringify({ payloads: payloads.map(payloadToJson) }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { payloads: JsonPayload[] };
  return body.payloads.map((p) => Buffer.from(p.data ?? '', 'base64').toString('utf8'));
}

test('the encrypted run completes and charges once', () => {
  expect(outcome.result.stopReason).toBe('completed');
  expect(outcome.result.calls[0]?.state).toBe('SUCCEEDED');
});

test('a plain client sees only binary/encrypted payloads, none containing the account id or the goal', () => {
  const payloads = startedInput();
  expect(payloads.length).toBeGreaterThan(0);
  for (const p of payloads) {
    expect(Buffer.from(p.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(p.metadata!['encryption-key-id']!).toString()).toBe('itest');
  }
  const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
  expect(bytes.includes(ACCOUNT)).toBe(false);
  expect(bytes.includes(GOAL)).toBe(false);
  expect(bytes.includes('wallet_debit acct_')).toBe(false);
});

test('the codec server decodes the stored input and the activity summary to plaintext', async () => {
  const [decodedInput] = await decodeViaServer(startedInput());
  expect(decodedInput).toContain(ACCOUNT);
  expect(decodedInput).toContain(GOAL);
  const [summary] = await decodeViaServer([dispatchSummary()]);
  expect(summary).toContain(`wallet_debit ${ACCOUNT} 12.50 EUR`);
});
