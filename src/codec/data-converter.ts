/**
 * The data converter Ledgerloop's clients and workers share, configured from the environment:
 *
 *   LEDGERLOOP_CODEC_KEYS    `kid1:<base64 of 32 bytes>,kid2:<base64 of 32 bytes>`  every key can decrypt
 *   LEDGERLOOP_CODEC_KEY_ID  the id of the key that encrypts (default: the last key listed)
 *   LEDGERLOOP_CODEC_KEYS_FILE  a file holding the LEDGERLOOP_CODEC_KEYS value (e.g. a Docker secret), read when
 *                               LEDGERLOOP_CODEC_KEYS itself is unset
 *   LEDGERLOOP_CODEC_STRICT  `1`/`true`: refuse plaintext payloads when decoding (default off; on in the compose
 *                            deployment). Strict without keys is a configuration error: the process refuses to start.
 *
 * No keys configured: no codec, payloads are stored as plain JSON. The same converter must be given to the Client
 * and to Worker.create; the workflow bundle does not need it (codecs run outside the sandbox).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DataConverter } from '@temporalio/common';
import { configValue } from '../config';
import { AesGcmPayloadCodec, CodecKeyConfigError, type CodecKeyRing } from './aes-gcm-codec';

/** Environment variable names (their shapes: src/config.ts). */
export const CODEC_KEYS_ENV = 'LEDGERLOOP_CODEC_KEYS';
export const CODEC_KEY_ID_ENV = 'LEDGERLOOP_CODEC_KEY_ID';
export const CODEC_KEYS_FILE_ENV = 'LEDGERLOOP_CODEC_KEYS_FILE';
export const CODEC_STRICT_ENV = 'LEDGERLOOP_CODEC_STRICT';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Parses `kid1:<base64>,kid2:<base64>` (whitespace around entries ignored) and the active key id.
 * Throws CodecKeyConfigError on malformed input; the ring itself is validated by the codec.
 */
export function parseCodecKeys(spec: string, activeKeyId?: string): CodecKeyRing {
  const keys = new Map<string, Uint8Array>();
  for (const entry of spec.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    // The entry itself is not echoed: it would be key material.
    if (colon <= 0) throw new CodecKeyConfigError(`${CODEC_KEYS_ENV}: an entry is not kid:base64`);
    const id = entry.slice(0, colon);
    const material = entry.slice(colon + 1);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(material)) {
      throw new CodecKeyConfigError(`${CODEC_KEYS_ENV}: a key is not base64`);
    }
    if (keys.has(id)) throw new CodecKeyConfigError(`${CODEC_KEYS_ENV}: a key id is listed twice`);
    keys.set(id, Buffer.from(material, 'base64'));
  }
  if (keys.size === 0) throw new CodecKeyConfigError(`${CODEC_KEYS_ENV} lists no keys`);
  const active = activeKeyId?.trim() || [...keys.keys()].at(-1)!;
  return { activeKeyId: active, keys };
}

/** The key ring spec from LEDGERLOOP_CODEC_KEYS, else from the file LEDGERLOOP_CODEC_KEYS_FILE names. */
function keySpecFromEnv(env: Env): string | undefined {
  const direct = configValue('LEDGERLOOP_CODEC_KEYS', env)?.trim();
  if (direct) return direct;
  const file = configValue('LEDGERLOOP_CODEC_KEYS_FILE', env)?.trim();
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (err) {
    throw new CodecKeyConfigError(`${CODEC_KEYS_FILE_ENV}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** LEDGERLOOP_CODEC_STRICT: `1`/`true`/`yes` on, unset/`0`/`false`/`no` off; anything else is refused. */
export function codecStrictFromEnv(env: Env = process.env): boolean {
  try {
    return configValue('LEDGERLOOP_CODEC_STRICT', env) ?? false;
  } catch (err) {
    throw new CodecKeyConfigError((err as Error).message);
  }
}

/**
 * The codec configured by the environment, or undefined when neither LEDGERLOOP_CODEC_KEYS nor
 * LEDGERLOOP_CODEC_KEYS_FILE gives any keys. Throws CodecKeyConfigError when LEDGERLOOP_CODEC_STRICT is on
 * without keys (strict means "nothing unencrypted"; no keys would mean "everything unencrypted").
 */
export function codecFromEnv(env: Env = process.env): AesGcmPayloadCodec | undefined {
  const strict = codecStrictFromEnv(env);
  const spec = keySpecFromEnv(env);
  if (!spec) {
    if (strict) {
      throw new CodecKeyConfigError(
        `${CODEC_STRICT_ENV}=1 needs keys: set ${CODEC_KEYS_ENV} or ${CODEC_KEYS_FILE_ENV}`,
      );
    }
    return undefined;
  }
  return new AesGcmPayloadCodec(parseCodecKeys(spec, configValue('LEDGERLOOP_CODEC_KEY_ID', env)), { strict });
}

/** `{ payloadCodecs: [codec] }` for Client and Worker, or undefined when no keys are configured. */
export function dataConverterFromEnv(env: Env = process.env): DataConverter | undefined {
  const codec = codecFromEnv(env);
  return codec ? { payloadCodecs: [codec] } : undefined;
}

/**
 * The data converter for codec keys given in code (`kid:base64,…`, as LEDGERLOOP_CODEC_KEYS, or a key ring): the
 * same AES-GCM codec the environment configures. `strict` (default LEDGERLOOP_CODEC_STRICT) refuses plaintext
 * payloads when decoding. Bad keys throw CodecKeyConfigError, naming no key material.
 */
export function ledgerloopDataConverter(
  keys: string | CodecKeyRing,
  opts: { readonly activeKeyId?: string; readonly strict?: boolean; readonly env?: Env } = {},
): DataConverter {
  const ring = typeof keys === 'string' ? parseCodecKeys(keys, opts.activeKeyId) : keys;
  const strict = opts.strict ?? codecStrictFromEnv(opts.env ?? process.env);
  return { payloadCodecs: [new AesGcmPayloadCodec(ring, { strict })] };
}

/** A fresh random key ring with one key, in the LEDGERLOOP_CODEC_KEYS format (for demos and tests). */
export function generateCodecKeys(keyId = `k${Date.now().toString(36)}`): { keys: string; keyId: string } {
  return { keys: `${keyId}:${randomBytes(32).toString('base64')}`, keyId };
}
