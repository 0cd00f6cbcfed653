/**
 * No token sits in history in clear text unnoticed. An identity token travels in a run's input (start) and in the
 * arguments of the `decideApproval`, `resolveCall` and `requestCancel` updates: Temporal keeps both in the run's
 * history, readable by anyone who can read the namespace, unless the client's payload codec encrypts them
 * (src/codec/data-converter.ts, LEDGERLOOP_CODEC_KEYS). Before a client helper sends a token it asks whether its
 * data converter encrypts: with LEDGERLOOP_CODEC_STRICT on, a client that would write the token in clear is
 * refused (`Identity.TokenInClear`) and nothing is sent; otherwise it is warned, once per process.
 *
 * An act token is bound to one run (and call) and lives minutes (src/identity/purpose.ts), so a token read from a
 * history cannot act elsewhere; encryption keeps it from being read at all.
 */
import type { DataConverter, LoadedDataConverter, Payload } from '@temporalio/common';
import { codecStrictFromEnv, CODEC_KEYS_ENV, CODEC_STRICT_ENV } from '../codec/data-converter';

const ENCRYPTED = 'binary/encrypted';

/** A client that would write a token in clear text under LEDGERLOOP_CODEC_STRICT: nothing was sent. */
export class TokenInClearError extends Error {
  override readonly name = 'TokenInClearError';
  readonly type = 'Identity.TokenInClear';
}

/**
 * Whether payloads this converter writes leave encrypted: a probe payload is passed through its codecs, in the
 * order the SDK encodes with, and must come out `binary/encrypted` (a codec that only decodes, or compresses, is not).
 */
export async function encryptsPayloads(dc: DataConverter | LoadedDataConverter | undefined): Promise<boolean> {
  const codecs = dc?.payloadCodecs ?? [];
  if (codecs.length === 0) return false;
  let payloads: Payload[] = [
    { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new Uint8Array() },
  ];
  for (const codec of codecs) payloads = await codec.encode(payloads);
  const encoding = payloads[0]?.metadata?.['encoding'];
  return encoding !== undefined && encoding !== null && new TextDecoder().decode(encoding) === ENCRYPTED;
}

let warned = false;

/**
 * Refuse (strict) or warn (once) when `dc` would write `what` (e.g. "the approver's token") in clear text. Resolves
 * whether the token leaves encrypted.
 */
export async function guardTokenTransport(
  dc: DataConverter | LoadedDataConverter | undefined,
  what: string,
  opts: { readonly env?: NodeJS.ProcessEnv; readonly warn?: (line: string) => void } = {},
): Promise<boolean> {
  if (await encryptsPayloads(dc)) return true;
  const env = opts.env ?? process.env;
  const said = `${what} would be written to the run's history in clear text: this client encrypts no payloads (set ${CODEC_KEYS_ENV} to the deployment's keys)`;
  if (codecStrictFromEnv(env))
    throw new TokenInClearError(`${said}; refused (${CODEC_STRICT_ENV} is on), nothing sent`);
  // Told once per process: by the caller's own channel (the CLI's stderr), else as a process warning.
  if (opts.warn) opts.warn(`warning: ${said}`);
  else if (!warned) process.emitWarning(said, { code: 'LEDGERLOOP_TOKEN_IN_CLEAR' });
  warned = true;
  return false;
}
