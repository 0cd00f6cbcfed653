/**
 * No capability token appears in a run's history: the dispatch activity signs a fresh token per attempt and
 * returns only its digest, kid and jti, which the ledger records. Checked over every payload of a real run's
 * recorded history (activity inputs and results, local-activity markers, updates, the workflow result).
 */
import type { Stack } from '../../lab/stack';
import { CAPABILITY_TYP } from '../../src/capability/capability';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('capability-history');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});

/** Every payload's data in a history, decoded as UTF-8 text. */
function payloadTexts(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) return out;
  if (Array.isArray(value)) {
    for (const v of value) payloadTexts(v, out);
  } else if (typeof value === 'object' && value !== null) {
    const data = (value as { data?: unknown }).data;
    if (data instanceof Uint8Array && 'metadata' in value) out.push(Buffer.from(data).toString('utf8'));
    for (const v of Object.values(value)) payloadTexts(v, out);
  }
  return out;
}

/** The base64url form of a capability header's start: any token of ours contains it. */
const TOKEN_MARK = Buffer.from(`{"alg":"EdDSA","typ":"${CAPABILITY_TYP}"`).toString('base64url').slice(0, 40);

test('a charged run records the capability digest, kid and jti, and no capability token anywhere in its history', async () => {
  const out = await runAgent(stack, 'cap-history', input());
  expect(out.result.calls[0]?.state).toBe('SUCCEEDED');
  const history = await out.handle.fetchHistory();
  const texts = payloadTexts(history);
  expect(texts.length).toBeGreaterThan(5);
  expect(texts.some((t) => t.includes('dispatchTool') || t.includes('wallet_debit'))).toBe(true);
  for (const t of texts) expect(t).not.toContain(TOKEN_MARK);
  const recorded = out.ledger.events.find((e) => e.type === 'ToolResultRecorded');
  expect(recorded).toMatchObject({
    capability: {
      kid: stack.capabilityKey.kid,
      aud: 'wallet',
      capabilityDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      jti: expect.any(String),
    },
  });
  // The digest is recorded, so it is in the history; the token it digests is not.
  const digest = (recorded as { capability: { capabilityDigest: string } }).capability.capabilityDigest;
  expect(texts.some((t) => t.includes(digest))).toBe(true);
});
