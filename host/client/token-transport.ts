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
import { codecStrictFromEnv, CODEC_KEYS_ENV, CODEC_STRICT_ENV } from '../../src/codec/data-converter';

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

/**
 * A client or worker that would write identity tokens (a client's run inputs and updates) or tool arguments (a
 * worker's activity inputs and results) in clear text, under LEDGERLOOP_CODEC_STRICT: it did not start.
 */
export class PayloadsInClearError extends Error {
  override readonly name = 'PayloadsInClearError';
  readonly type = 'Codec.PayloadsInClear';
}

export interface EncryptionCheckOptions {
  /** Who starts: a client writes identity tokens, a worker tool arguments and results. */
  readonly role: 'client' | 'worker';
  /** Default process.env (LEDGERLOOP_CODEC_STRICT). */
  readonly env?: NodeJS.ProcessEnv;
  /** Refuse instead of warning; default LEDGERLOOP_CODEC_STRICT. */
  readonly strict?: boolean;
  /** Where the warning goes (a CLI's stderr); default a process warning. Told once per process either way. */
  readonly warn?: (line: string) => void;
}

const WRITES: Record<EncryptionCheckOptions['role'], string> = {
  client: 'identity tokens (run inputs, approvals, operator resolutions)',
  worker: "tool arguments and results, and the runs' identity tokens",
};

/**
 * The check a client or worker makes when it starts: if its data converter encrypts nothing it would write
 * identity tokens or tool arguments to history in clear text. Under strict it is refused (`PayloadsInClearError`,
 * nothing started); otherwise it is warned, once per process. Resolves whether it encrypts.
 */
export async function checkPayloadEncryption(
  dc: DataConverter | LoadedDataConverter | undefined,
  opts: EncryptionCheckOptions,
): Promise<boolean> {
  if (await encryptsPayloads(dc)) return true;
  reportInClear(opts);
  return false;
}

/**
 * The same check without the probe, for a converter known to carry no codec at all (a plugin configuring a
 * client, which cannot wait): throws under strict, else warns once.
 */
export function reportInClear(opts: EncryptionCheckOptions): void {
  const strict = opts.strict ?? codecStrictFromEnv(opts.env ?? process.env);
  const said = `this ${opts.role} encrypts no payloads: ${WRITES[opts.role]} would be written to history in clear text (set ${CODEC_KEYS_ENV}, or give the plugin codecKeys)`;
  if (strict) throw new PayloadsInClearError(`${said}; refused (${CODEC_STRICT_ENV} is on), not started`);
  warnOnce(said, opts.warn);
}

let warned = false;

function warnOnce(said: string, warn: ((line: string) => void) | undefined): void {
  if (warn) warn(`warning: ${said}`);
  else if (!warned) process.emitWarning(said, { code: 'LEDGERLOOP_PAYLOADS_IN_CLEAR' });
  warned = true;
}

/**
 * Refuse (strict) or warn (once) when `dc` would write `what` (e.g. "the approver's token") in clear text. Resolves
 * whether the token leaves encrypted.
 */
export async function guardTokenTransport(
  dc: DataConverter | LoadedDataConverter | undefined,
  what: string,
  opts: {
    readonly env?: NodeJS.ProcessEnv;
    readonly warn?: (line: string) => void;
    /**
     * Refuse instead of warning; default LEDGERLOOP_CODEC_STRICT. The CLI refuses unless told otherwise
     * (`--allow-token-in-clear`), and says so in `refusal`.
     */
    readonly strict?: boolean;
    /** How the refusal ends; default "(LEDGERLOOP_CODEC_STRICT is on)". */
    readonly refusal?: string;
  } = {},
): Promise<boolean> {
  if (await encryptsPayloads(dc)) return true;
  const env = opts.env ?? process.env;
  const said = `${what} would be written to the run's history in clear text: this client encrypts no payloads (set ${CODEC_KEYS_ENV} to the deployment's keys)`;
  if (opts.strict ?? codecStrictFromEnv(env))
    throw new TokenInClearError(`${said}; refused ${opts.refusal ?? `(${CODEC_STRICT_ENV} is on)`}, nothing sent`);
  // Told once per process: by the caller's own channel (the CLI's stderr), else as a process warning.
  warnOnce(said, opts.warn);
  return false;
}
