/** Before a token is sent: does this client encrypt what it writes? Warn, or under strict mode refuse, if not. */
import {
  codecFromEnv,
  dataConverterFromEnv,
  generateCodecKeys,
  ledgerloopDataConverter,
} from '../../src/codec/data-converter';
import {
  checkPayloadEncryption,
  encryptsPayloads,
  guardTokenTransport,
  PayloadsInClearError,
  reportInClear,
  TokenInClearError,
} from '../../host/client/token-transport';

const keys = { LEDGERLOOP_CODEC_KEYS: generateCodecKeys('t').keys };

test('only a converter whose codecs write binary/encrypted counts as encrypting', async () => {
  expect(await encryptsPayloads(undefined)).toBe(false);
  expect(await encryptsPayloads({ payloadCodecs: [] })).toBe(false);
  expect(await encryptsPayloads(dataConverterFromEnv(keys))).toBe(true);
  // A codec that decodes with the keys but writes plaintext does not count.
  const codec = codecFromEnv(keys)!;
  const decodeOnly = { encode: async (p: never[]) => p, decode: (p: never[]) => codec.decode(p) };
  expect(await encryptsPayloads({ payloadCodecs: [decodeOnly] })).toBe(false);
});

test('a client that would write a token in clear is warned; under LEDGERLOOP_CODEC_STRICT it is refused', async () => {
  const lines: string[] = [];
  const warn = (l: string) => lines.push(l);
  expect(await guardTokenTransport(undefined, "the approver's token", { env: {}, warn })).toBe(false);
  expect(lines).toEqual([expect.stringMatching(/^warning: the approver's token would be written .* in clear text/)]);
  await expect(
    guardTokenTransport(undefined, "the approver's token", { env: { LEDGERLOOP_CODEC_STRICT: '1' }, warn }),
  ).rejects.toThrow(TokenInClearError);
  // Control: a client with the keys sends it, warned of nothing, strict or not.
  expect(
    await guardTokenTransport(dataConverterFromEnv(keys), 't', { env: { LEDGERLOOP_CODEC_STRICT: '1' }, warn }),
  ).toBe(true);
  expect(lines).toHaveLength(1);
});

test('a client or worker that encrypts nothing is warned once when it starts; under strict it is refused', async () => {
  const lines: string[] = [];
  const warn = (l: string) => lines.push(l);
  expect(await checkPayloadEncryption(undefined, { role: 'worker', env: {}, warn })).toBe(false);
  expect(lines).toEqual([expect.stringMatching(/^warning: this worker encrypts no payloads: tool arguments/)]);
  expect(() => reportInClear({ role: 'client', env: {}, warn })).not.toThrow();
  expect(lines[1]).toMatch(/^warning: this client encrypts no payloads: identity tokens/);
  await expect(
    checkPayloadEncryption(undefined, { role: 'worker', env: { LEDGERLOOP_CODEC_STRICT: '1' }, warn }),
  ).rejects.toThrow(PayloadsInClearError);
  expect(() => reportInClear({ role: 'client', strict: true, warn })).toThrow(PayloadsInClearError);
  // Control: a converter with the keys starts, strict or not, warned of nothing.
  expect(
    await checkPayloadEncryption(ledgerloopDataConverter(keys.LEDGERLOOP_CODEC_KEYS), {
      role: 'worker',
      strict: true,
      warn,
    }),
  ).toBe(true);
  expect(lines).toHaveLength(2);
});
