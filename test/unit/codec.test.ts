import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  AesGcmPayloadCodec,
  CodecKeyConfigError,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
} from '../../src/codec/aes-gcm-codec';
import { codecFromEnv, dataConverterFromEnv, parseCodecKeys } from '../../src/codec/data-converter';

const key1 = randomBytes(32).toString('base64');
const key2 = randomBytes(32).toString('base64');
const text = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');

const secret = { account: 'acct_secret_42', goal: 'Charge 12.50 EUR for order 1001' };
const plain = (): Payload => defaultPayloadConverter.toPayload(secret);

function codec(spec: string, active?: string): AesGcmPayloadCodec {
  return new AesGcmPayloadCodec(parseCodecKeys(spec, active));
}

async function decryptError(c: AesGcmPayloadCodec, p: Payload): Promise<PayloadDecryptionError> {
  const err = await c.decode([p]).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PayloadDecryptionError);
  return err as PayloadDecryptionError;
}

describe('AesGcmPayloadCodec', () => {
  test('round trip restores metadata and data', async () => {
    const c = codec(`k1:${key1}`);
    const [enc] = await c.encode([plain()]);
    const [dec] = await c.decode([enc!]);
    expect(text(dec!.metadata!.encoding)).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(dec!)).toEqual(secret);
  });

  test('the encrypted payload hides the plaintext and names the key', async () => {
    const c = codec(`k1:${key1}`);
    const [enc] = await c.encode([plain()]);
    expect(text(enc!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(enc!.metadata![KEY_ID_METADATA])).toBe('k1');
    const bytes = Buffer.from(enc!.data!);
    expect(bytes.includes('acct_secret_42')).toBe(false);
    expect(bytes.includes('order 1001')).toBe(false);
    expect(bytes.includes('json/plain')).toBe(false);
  });

  test('a fresh IV per payload: the same payload encrypts differently each time', async () => {
    const c = codec(`k1:${key1}`);
    const [a, b] = await c.encode([plain(), plain()]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
    expect(Buffer.from(a!.data!).subarray(0, 12).equals(Buffer.from(b!.data!).subarray(0, 12))).toBe(false);
  });

  test('unencrypted payloads pass through decode unchanged (not strict)', async () => {
    const c = codec(`k1:${key1}`);
    const p = plain();
    const [out] = await c.decode([p]);
    expect(out).toBe(p);
  });

  test('strict: a plaintext payload (or one with no encoding at all) is refused with a typed error', async () => {
    const c = new AesGcmPayloadCodec(parseCodecKeys(`k1:${key1}`), { strict: true });
    for (const p of [plain(), defaultPayloadConverter.toPayload(null), { metadata: {}, data: Buffer.from('{}') }]) {
      const err = await decryptError(c, p);
      expect(err.reason).toBe('plaintext-refused');
      expect(err.name).toBe('PayloadDecryptionError');
      expect(err.message).toMatch(/LEDGERLOOP_CODEC_STRICT/);
    }
    // One plaintext payload among encrypted ones fails the whole decode: nothing is passed through.
    const [enc] = await c.encode([plain()]);
    expect((await decryptError(c, plain())).reason).toBe('plaintext-refused');
    await expect(c.decode([enc!, plain()])).rejects.toThrow(PayloadDecryptionError);
    // Encrypted payloads still round-trip.
    expect(defaultPayloadConverter.fromPayload((await c.decode([enc!]))[0]!)).toEqual(secret);
  });

  test('a missing key id is a typed error', async () => {
    const c = codec(`k1:${key1}`);
    const [enc] = await c.encode([plain()]);
    const { [KEY_ID_METADATA]: _dropped, ...metadata } = enc!.metadata!;
    const err = await decryptError(c, { metadata, data: enc!.data! });
    expect(err.reason).toBe('missing-key-id');
    expect(err.message).toMatch(/encryption-key-id/);
  });

  test('a key id that is not configured is a typed error; its message names no key id (configured or not)', async () => {
    const [enc] = await codec(`kid-other-2:${key2}`).encode([plain()]);
    const err = await decryptError(codec(`kid-ring-1:${key1}`), enc!);
    expect(err.reason).toBe('unknown-key-id');
    expect(err.keyId).toBe('kid-other-2');
    expect(err.message).toMatch(/LEDGERLOOP_CODEC_KEYS/);
    expect(err.message).not.toContain('kid-ring-1');
    expect(err.message).not.toContain('kid-other-2');
    const auth = await decryptError(codec(`kid-other-2:${key1}`), enc!);
    expect(auth.reason).toBe('authentication-failed');
    expect(auth.message).not.toContain('kid-other-2');
  });

  test('the wrong key material under the right id fails authentication', async () => {
    const [enc] = await codec(`k1:${key1}`).encode([plain()]);
    const err = await decryptError(codec(`k1:${key2}`), enc!);
    expect(err.reason).toBe('authentication-failed');
  });

  test('tampered data or a relabelled key id fails authentication', async () => {
    const both = codec(`k1:${key1},k2:${key1}`, 'k1');
    const [enc] = await both.encode([plain()]);
    const data = Buffer.from(enc!.data!);
    data[20] = data[20]! ^ 1;
    expect((await decryptError(both, { metadata: enc!.metadata!, data })).reason).toBe('authentication-failed');
    const relabelled = { metadata: { ...enc!.metadata!, [KEY_ID_METADATA]: Buffer.from('k2') }, data: enc!.data! };
    expect((await decryptError(both, relabelled)).reason).toBe('authentication-failed');
  });

  test('rotation: encrypt with kid2, decrypt old and new payloads with both listed', async () => {
    const [old] = await codec(`kid1:${key1}`).encode([plain()]);
    const rotated = codec(`kid1:${key1},kid2:${key2}`, 'kid2');
    const [fresh] = await rotated.encode([plain()]);
    expect(text(fresh!.metadata![KEY_ID_METADATA])).toBe('kid2');
    const [a, b] = await rotated.decode([old!, fresh!]);
    expect(defaultPayloadConverter.fromPayload(a!)).toEqual(secret);
    expect(defaultPayloadConverter.fromPayload(b!)).toEqual(secret);
    // Once kid1 is retired, its payloads no longer decrypt.
    expect((await decryptError(codec(`kid2:${key2}`), old!)).reason).toBe('unknown-key-id');
  });
});

describe('codec configuration from the environment', () => {
  test('no keys: no data converter', () => {
    expect(dataConverterFromEnv({})).toBeUndefined();
    expect(dataConverterFromEnv({ LEDGERLOOP_CODEC_KEYS: '  ' })).toBeUndefined();
  });

  test('keys: one codec, the active id from LEDGERLOOP_CODEC_KEY_ID, else the last listed', () => {
    const env = { LEDGERLOOP_CODEC_KEYS: `kid1:${key1}, kid2:${key2}`, LEDGERLOOP_CODEC_KEY_ID: 'kid1' };
    expect(dataConverterFromEnv(env)?.payloadCodecs).toHaveLength(1);
    expect(codecFromEnv(env)?.activeKeyId).toBe('kid1');
    expect(codecFromEnv({ LEDGERLOOP_CODEC_KEYS: env.LEDGERLOOP_CODEC_KEYS })?.activeKeyId).toBe('kid2');
    expect(codecFromEnv(env)?.keyIds).toEqual(['kid1', 'kid2']);
  });

  test.each([
    ['not kid:base64', 'justakey'],
    ['a short key', `k1:${randomBytes(16).toString('base64')}`],
    ['not base64', 'k1:!!!!'],
    ['a duplicate id', `k1:${key1},k1:${key2}`],
  ])('rejects %s', (_what, spec) => {
    expect(() => codecFromEnv({ LEDGERLOOP_CODEC_KEYS: spec })).toThrow(CodecKeyConfigError);
  });

  test('LEDGERLOOP_CODEC_KEYS_FILE: keys from a file (a Docker secret), the variable itself wins', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'codec-keys-')), 'keys');
    fs.writeFileSync(file, `filekey:${key1}\n`);
    expect(codecFromEnv({ LEDGERLOOP_CODEC_KEYS_FILE: file })?.keyIds).toEqual(['filekey']);
    expect(codecFromEnv({ LEDGERLOOP_CODEC_KEYS_FILE: file, LEDGERLOOP_CODEC_KEYS: `env:${key2}` })?.keyIds).toEqual([
      'env',
    ]);
    expect(() => codecFromEnv({ LEDGERLOOP_CODEC_KEYS_FILE: `${file}.missing` })).toThrow(CodecKeyConfigError);
  });

  test('rejects an active key id that is not listed, without listing the configured ids', () => {
    const run = (): unknown =>
      codecFromEnv({ LEDGERLOOP_CODEC_KEYS: `kid-ring-1:${key1}`, LEDGERLOOP_CODEC_KEY_ID: 'k9' });
    expect(run).toThrow(CodecKeyConfigError);
    expect(run).toThrow(/not one of the 1 configured keys/);
    expect(run).not.toThrow(/kid-ring-1/);
  });

  test('LEDGERLOOP_CODEC_STRICT=1: the codec refuses plaintext; strict without keys refuses to start', async () => {
    const strict = codecFromEnv({ LEDGERLOOP_CODEC_KEYS: `k1:${key1}`, LEDGERLOOP_CODEC_STRICT: '1' })!;
    expect(strict.strict).toBe(true);
    expect((await decryptError(strict, plain())).reason).toBe('plaintext-refused');
    const converter = dataConverterFromEnv({ LEDGERLOOP_CODEC_KEYS: `k1:${key1}`, LEDGERLOOP_CODEC_STRICT: 'true' });
    await expect(converter!.payloadCodecs![0]!.decode([plain()])).rejects.toThrow(PayloadDecryptionError);
    expect(codecFromEnv({ LEDGERLOOP_CODEC_KEYS: `k1:${key1}` })!.strict).toBe(false);
    expect(() => codecFromEnv({ LEDGERLOOP_CODEC_STRICT: '1' })).toThrow(/LEDGERLOOP_CODEC_STRICT=1 needs keys/);
    expect(() => codecFromEnv({ LEDGERLOOP_CODEC_KEYS: `k1:${key1}`, LEDGERLOOP_CODEC_STRICT: 'maybe' })).toThrow(
      CodecKeyConfigError,
    );
  });
});
