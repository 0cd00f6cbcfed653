/**
 * The worker's message guard (src/codec/message-guard.ts), without a server: a payload the workflow owns that cannot
 * be decoded becomes an undecodable marker, while an activity's payload (or one without a context) stays strict.
 * Every refusal has its positive control: the same guard decodes a good payload to the original.
 */
import { randomBytes } from 'node:crypto';
import {
  defaultPayloadConverter,
  type ActivitySerializationContext,
  type Payload,
  type WorkflowSerializationContext,
} from '@temporalio/common';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../../src/codec/aes-gcm-codec';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { MessageGuardCodec, MessageGuardConfigError, workerDataConverter } from '../../src/codec/message-guard';
import { refuseUndecodable, undecodable, UNDECODABLE_KEY } from '../../src/domain/undecodable';
import { Failure } from '../../src/domain/failures';
import { MAX_JSON_DEPTH } from '../../src/domain/json-depth';

const { keys, keyId } = generateCodecKeys('guard');
const strict = codecFromEnv({
  LEDGERLOOP_CODEC_KEYS: keys,
  LEDGERLOOP_CODEC_KEY_ID: keyId,
  LEDGERLOOP_CODEC_STRICT: '1',
})!;
const wf: WorkflowSerializationContext = { type: 'workflow', namespace: 'default', workflowId: 'run-1' };
const act: ActivitySerializationContext = {
  type: 'activity',
  namespace: 'default',
  workflowId: 'run-1',
  isLocal: false,
};
const enc = new TextEncoder();

const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const junk = (): Payload => ({
  metadata: { encoding: enc.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: enc.encode(keyId) },
  data: randomBytes(64),
});
const read = (p: Payload | undefined): unknown => defaultPayloadConverter.fromPayload(p!);

describe('payloads the workflow owns', () => {
  const guard = new MessageGuardCodec([strict]);

  test('an encrypted payload decodes to the original (the positive control)', async () => {
    const sealed = await strict.encode([plain({ decision: 'approve' })]);
    expect((await guard.decode(sealed, wf)).map(read)).toEqual([{ decision: 'approve' }]);
  });

  test.each([
    ['plaintext to a strict codec', () => plain({ decision: 'approve' }), 'plaintext-refused'],
    ['junk labelled binary/encrypted', junk, 'authentication-failed'],
    [
      'an unknown key id',
      () => ({ ...junk(), metadata: { ...junk().metadata, [KEY_ID_METADATA]: enc.encode('nobody') } }),
      'unknown-key-id',
    ],
    ['an encrypted payload too short to hold a tag', () => ({ ...junk(), data: new Uint8Array(3) }), 'malformed'],
  ])('%s becomes a marker naming why, never the bytes', async (_name, make, reason) => {
    const refused: unknown[] = [];
    const g = new MessageGuardCodec([strict], { onRefused: (r) => refused.push(r) });
    const payload = make();
    const [out] = await g.decode([payload], wf);
    const value = read(out);
    expect(undecodable(value)).toEqual({ reason, bytes: expect.any(Number) });
    expect(JSON.stringify(value)).not.toContain(Buffer.from(payload.data ?? []).toString('base64'));
    expect(refused).toEqual([{ workflowId: 'run-1', reason, bytes: expect.any(Number) }]);
  });

  test('one bad payload does not take the good ones of the same batch with it', async () => {
    const [good] = await strict.encode([plain(7)]);
    const out = await guard.decode([good!, plain('x'), good!], wf);
    expect(read(out[0])).toBe(7);
    expect(undecodable(read(out[1]))?.reason).toBe('plaintext-refused');
    expect(read(out[2])).toBe(7);
  });

  test('without keys: junk labelled binary/encrypted and JSON that is not JSON become markers; JSON passes', async () => {
    const bare = new MessageGuardCodec([]);
    const notJson: Payload = { metadata: { encoding: enc.encode('json/plain') }, data: enc.encode('{nope') };
    const [a, b, c] = await bare.decode([junk(), notJson, plain({ ok: 1 })], wf);
    expect(undecodable(read(a))?.reason).toBe('unknown-encoding');
    expect(undecodable(read(b))?.reason).toBe('unreadable');
    expect(read(c)).toEqual({ ok: 1 });
    // The positive control of the check itself: the payload converter really throws on the first two.
    expect(() => defaultPayloadConverter.fromPayload(junk())).toThrow(/Unknown encoding/);
    expect(() => defaultPayloadConverter.fromPayload(notJson)).toThrow();
  });
});

describe('activity payloads and payloads without a context stay strict', () => {
  const guard = new MessageGuardCodec([strict]);

  test.each([
    ['an activity result', act],
    ['no context', undefined],
  ])('%s that cannot be decoded throws, as before (a marker there could be read as an answer)', async (_n, ctx) => {
    await expect(guard.decode([plain({ ok: true })], ctx)).rejects.toBeInstanceOf(PayloadDecryptionError);
    await expect(guard.decode([junk()], ctx)).rejects.toMatchObject({ reason: 'authentication-failed' });
    // positive control: a good one decodes
    const sealed = await strict.encode([plain(42)]);
    expect((await guard.decode(sealed, ctx)).map(read)).toEqual([42]);
  });
});

describe('workerDataConverter', () => {
  test('wraps the client codecs, encodes as they do, and is not applied twice', async () => {
    const converter = workerDataConverter({ payloadCodecs: [strict] });
    const [codec] = converter.payloadCodecs ?? [];
    expect(codec).toBeInstanceOf(MessageGuardCodec);
    const sealed = await codec!.encode([plain('x')]);
    expect(new TextDecoder().decode(sealed[0]!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(workerDataConverter(converter)).toBe(converter);
    expect(workerDataConverter(undefined).payloadCodecs?.[0]).toBeInstanceOf(MessageGuardCodec);
  });

  test('a custom payload converter is refused: the guard checks with the default one', () => {
    expect(() => workerDataConverter({ payloadConverterPath: '/x.js' })).toThrow(MessageGuardConfigError);
  });
});

describe('the refusal inside the workflow', () => {
  test('a marker is refused with Message.Undecodable; anything else passes', () => {
    const marker = { [UNDECODABLE_KEY]: { reason: 'plaintext-refused', bytes: 12 } };
    expect(() => refuseUndecodable(marker, 'the approval decision')).toThrow(
      expect.objectContaining({ type: Failure.MessageUndecodable, nonRetryable: true }),
    );
    for (const ok of [undefined, null, 3, 'x', { logicalCallId: 'lc_1' }, Object.create({ [UNDECODABLE_KEY]: {} })])
      expect(() => refuseUndecodable(ok, 'x')).not.toThrow();
  });
});

describe('payloads the workflow owns, nested too deep', () => {
  const guard = new MessageGuardCodec([]);
  const deepText = (d: number) => `{"decision":${'['.repeat(d)}${']'.repeat(d)}}`;
  const jsonPayload = (text: string): Payload => ({
    metadata: { encoding: enc.encode('json/plain') },
    data: enc.encode(text),
  });

  test('a 1e5-deep JSON message becomes a too-deep marker before any workflow code walks it', async () => {
    const [out] = await guard.decode([jsonPayload(deepText(100_000))], wf);
    expect(undecodable(read(out))).toEqual({ reason: 'too-deep', bytes: expect.any(Number) });
  });

  test('the same message at the limit passes untouched (the positive control)', async () => {
    const text = deepText(MAX_JSON_DEPTH - 1);
    const [out] = await guard.decode([jsonPayload(text)], wf);
    expect(read(out)).toEqual(JSON.parse(text));
  });

  test('an activity payload is not the guard’s to replace, however deep', async () => {
    const p = jsonPayload(deepText(1_000));
    expect(await guard.decode([p], act)).toEqual([p]);
  });
});
