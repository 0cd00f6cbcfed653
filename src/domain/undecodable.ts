/**
 * The stand-in a worker puts in place of a message payload it cannot decode, and the workflow's refusal of it.
 *
 * A signal, update or query reaches the worker as payloads that are decoded (src/codec/message-guard.ts) before any
 * workflow code runs. A payload that cannot be decoded there used to fail the workflow task, and every task after
 * it, so one hostile signal froze a run. The guard replaces such a payload with this marker, a plain JSON object
 * the workflow recognises: an update or query carrying it is refused with `Message.Undecodable`, a signal carrying
 * it is ignored and logged, a run started with it fails with `Run.InputInvalid`. The marker says why and how many
 * bytes arrived, never what they were.
 *
 * Imported by workflow code: no Node built-ins here.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Failure } from './failures';

/** The marker's one key. A plain JSON payload that carries it is refused as undecodable too, which is harmless. */
export const UNDECODABLE_KEY = 'ledgerloop:undecodable';

/** Why a payload could not be decoded: the codec's reasons, then the payload converter's. */
export type UndecodableReason =
  | 'plaintext-refused'
  | 'missing-key-id'
  | 'unknown-key-id'
  | 'malformed'
  | 'authentication-failed'
  /** No payload converter reads the payload's `encoding` (e.g. `binary/encrypted` on a worker without keys). */
  | 'unknown-encoding'
  /** The encoding is known, the data does not parse (e.g. `json/plain` that is not JSON). */
  | 'unreadable'
  /** JSON nested deeper than `MAX_JSON_DEPTH` (src/domain/json-depth.ts): every walk over it would recurse. */
  | 'too-deep';

export interface UndecodableMarker {
  readonly [UNDECODABLE_KEY]: { readonly reason: UndecodableReason; readonly bytes: number };
}

export function undecodableMarker(reason: UndecodableReason, bytes: number): UndecodableMarker {
  return { [UNDECODABLE_KEY]: { reason, bytes } };
}

/** The marker's content when `value` is one (an own property, so no prototype can pose as one). */
export function undecodable(value: unknown): UndecodableMarker[typeof UNDECODABLE_KEY] | undefined {
  if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, UNDECODABLE_KEY))
    return undefined;
  const inner = (value as Record<string, unknown>)[UNDECODABLE_KEY];
  const r = typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>) : {};
  return {
    reason: typeof r['reason'] === 'string' ? (r['reason'] as UndecodableReason) : 'unreadable',
    bytes: typeof r['bytes'] === 'number' ? r['bytes'] : -1,
  };
}

/** A typed refusal (`Message.Undecodable`) of `what` when `value` is a marker; nothing when it is not. */
export function refuseUndecodable(value: unknown, what: string): void {
  const u = undecodable(value);
  if (u === undefined) return;
  throw ApplicationFailure.create({
    type: Failure.MessageUndecodable,
    nonRetryable: true,
    message: `${what} could not be decoded by this worker (${u.reason}, ${u.bytes} bytes): nothing was done. Send it through a client with the deployment's codec.`,
  });
}
