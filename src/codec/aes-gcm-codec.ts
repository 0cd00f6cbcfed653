/**
 * A Temporal `PayloadCodec` that encrypts every payload with AES-256-GCM (node:crypto).
 *
 * The whole original payload (its metadata and its data) is serialised as a `temporal.api.common.v1.Payload`
 * and encrypted, so not even its encoding (`json/plain`, ...) is visible to the server. The encrypted payload is
 *
 *   metadata: { encoding: 'binary/encrypted', 'encryption-key-id': <kid> }
 *   data:     IV (12 random bytes) ‖ ciphertext ‖ GCM tag (16 bytes)
 *
 * with the key id as additional authenticated data, so a payload cannot be re-labelled with another key id.
 * Decoding looks the key up by the id in the payload: any configured key decrypts, only the active one encrypts
 * (key rotation). Codecs run in the worker and client processes, never inside the workflow sandbox.
 *
 * Strict mode (`strict: true`, LEDGERLOOP_CODEC_STRICT=1) refuses every payload that is not `binary/encrypted`:
 * a plaintext payload written by someone without the key (a client without the codec, the Web UI or the CLI
 * starting or signalling a run) fails with PayloadDecryptionError('plaintext-refused') instead of reaching the
 * workflow. Error messages never name the configured key ids (an operator reading a log learns nothing about the
 * key ring); the payload's own key id is on the error object (`keyId`) for programmatic use only.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** `encoding` metadata value of a payload this codec encrypted. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata key holding the id of the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Why a payload could not be decrypted. */
export type PayloadDecryptionReason =
  | 'missing-key-id'
  | 'unknown-key-id'
  | 'malformed'
  | 'authentication-failed'
  /** Strict mode: the payload is not encrypted at all. */
  | 'plaintext-refused';

/**
 * A payload this codec cannot turn back into the original payload (or, in strict mode, refuses because it is not
 * encrypted). Thrown in the worker, it fails the workflow task (or the activity task) whose input it was: the
 * failure's type is `PayloadDecryptionError` and its message names the reason, never a key id.
 */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
  constructor(
    readonly reason: PayloadDecryptionReason,
    message: string,
    /** The key id named by the payload, when it names one. */
    readonly keyId?: string,
  ) {
    super(message);
  }
}

/** A key ring that cannot be used: bad key length, empty id, an active key id that is not in the ring. */
export class CodecKeyConfigError extends Error {
  override readonly name = 'CodecKeyConfigError';
}

/** The keys a codec knows, by id, and the id it encrypts with. */
export interface CodecKeyRing {
  /** Key id used for encoding. Must be a key of `keys`. */
  readonly activeKeyId: string;
  /** 32-byte AES keys by id. Every key here can decrypt. */
  readonly keys: ReadonlyMap<string, Uint8Array>;
}

/** Checks a key ring: non-empty ids without `,` or `:`, 32-byte keys, the active id present. */
export function validateKeyRing(ring: CodecKeyRing): void {
  if (ring.keys.size === 0) throw new CodecKeyConfigError('the codec key ring is empty');
  for (const [id, key] of ring.keys) {
    if (!/^[A-Za-z0-9._-]+$/.test(id)) {
      throw new CodecKeyConfigError('a codec key id must match [A-Za-z0-9._-]+');
    }
    if (key.length !== KEY_BYTES) {
      throw new CodecKeyConfigError(`a codec key has ${key.length} bytes; AES-256 needs ${KEY_BYTES}`);
    }
  }
  if (!ring.keys.has(ring.activeKeyId)) {
    // The configured ids are not listed: this message can end up in logs.
    throw new CodecKeyConfigError(
      `the active codec key id (LEDGERLOOP_CODEC_KEY_ID) is not one of the ${ring.keys.size} configured keys`,
    );
  }
}

export interface AesGcmCodecOptions {
  /**
   * Refuse payloads that are not `binary/encrypted` when decoding (PayloadDecryptionError 'plaintext-refused').
   * Default false: unencrypted payloads pass through, so runs started before encryption was switched on stay
   * readable. The compose deployment turns it on (LEDGERLOOP_CODEC_STRICT=1).
   */
  readonly strict?: boolean;
}

/** AES-256-GCM payload encryption with a key ring; see the module comment for the format. */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Buffer>;
  readonly activeKeyId: string;
  readonly strict: boolean;

  constructor(ring: CodecKeyRing, options: AesGcmCodecOptions = {}) {
    validateKeyRing(ring);
    this.keys = new Map([...ring.keys].map(([id, key]) => [id, Buffer.from(key)]));
    this.activeKeyId = ring.activeKeyId;
    this.strict = options.strict === true;
  }

  /** Ids of every key that can decrypt, the active one included. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encryptOne(p));
  }

  /** Payloads not marked `binary/encrypted` pass through unchanged, unless the codec is strict (then: refused). */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decryptOne(p));
  }

  private encryptOne(payload: Payload): Payload {
    const key = this.keys.get(this.activeKeyId) as Buffer;
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(encoder.encode(this.activeKeyId));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return {
      metadata: {
        encoding: encoder.encode(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: encoder.encode(this.activeKeyId),
      },
      data: Buffer.concat([iv, body, cipher.getAuthTag()]),
    };
  }

  private decryptOne(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) {
      if (!this.strict) return payload;
      throw new PayloadDecryptionError(
        'plaintext-refused',
        'plaintext payload refused: this codec is strict (LEDGERLOOP_CODEC_STRICT=1) and accepts only binary/encrypted ' +
          "payloads; whoever wrote this payload did not encrypt it with the deployment's keys",
      );
    }
    const rawKeyId = payload.metadata?.[KEY_ID_METADATA];
    if (!rawKeyId || rawKeyId.length === 0) {
      throw new PayloadDecryptionError(
        'missing-key-id',
        `an encrypted payload has no "${KEY_ID_METADATA}" metadata; cannot tell which key decrypts it`,
      );
    }
    const keyId = decoder.decode(rawKeyId);
    const key = this.keys.get(keyId);
    if (!key) {
      throw new PayloadDecryptionError(
        'unknown-key-id',
        'payload encrypted with a key id that is not configured; add that key to LEDGERLOOP_CODEC_KEYS to decrypt',
        keyId,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadDecryptionError('malformed', `encrypted payload too short (${data.length} bytes)`, keyId);
    }
    const iv = data.subarray(0, IV_BYTES);
    const tag = data.subarray(data.length - TAG_BYTES);
    const body = data.subarray(IV_BYTES, data.length - TAG_BYTES);
    let plain: Buffer;
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(rawKeyId);
      decipher.setAuthTag(tag);
      plain = Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        'authentication-failed',
        'payload does not decrypt with the key its id names: wrong key material or tampered data',
        keyId,
      );
    }
    const original = temporal.api.common.v1.Payload.decode(plain);
    return { metadata: original.metadata ?? {}, data: original.data ?? new Uint8Array() };
  }
}
