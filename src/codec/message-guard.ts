/**
 * The worker's payload codec: the deployment's codecs (or none), wrapped so that no message can fail a workflow
 * task.
 *
 * Before any workflow code runs, the worker decodes every payload of a workflow activation: the start input and
 * each signal, update and query argument, then the workflow's payload converter reads them inside the sandbox.
 * A payload that fails either step (plain JSON sent to a strict codec, junk labelled `binary/encrypted`, an
 * encoding no converter reads, `json/plain` that is not JSON) used to fail the workflow task, and every retry of it:
 * one signal froze a run. The SDK (1.24) tells a codec whose payload it decodes (`SerializationContext`):
 *
 * - `{ type: 'workflow' }`: the payloads the workflow owns, sent to it by whoever may call the namespace. One that
 *   fails, or is JSON nested deeper than `MAX_JSON_DEPTH`, is replaced by an undecodable marker (src/domain/undecodable.ts) that the workflow refuses or ignores.
 * - `{ type: 'activity' }`, or no context: activity results and failures, the workflow's own answers. These stay
 *   strict and fail the task as before: a marker there could be read as an answer.
 *
 * Only the worker gets this codec. A client decodes workflow results and query answers under the workflow context
 * too, and must see a decoding error there, never a marker: clients keep the plain converter
 * (`dataConverterFromEnv`).
 */
import {
  defaultPayloadConverter,
  type DataConverter,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
  type WorkflowSerializationContext,
} from '@temporalio/common';
import { PayloadDecryptionError } from './aes-gcm-codec';
import { MAX_JSON_DEPTH, textDepth } from '../domain/json-depth';
import { undecodableMarker, type UndecodableReason } from '../domain/undecodable';

/** What the guard tells its owner about each payload it replaced (never the payload itself). */
export interface RefusedPayload {
  readonly workflowId: string;
  readonly reason: UndecodableReason;
  readonly bytes: number;
}

export interface MessageGuardOptions {
  /** Called for each replaced payload, e.g. to log it. Default: nothing. */
  readonly onRefused?: (refused: RefusedPayload) => void;
}

/** Decodes through `codecs` as the SDK does (the last codec first), with the context the SDK gave. */
async function decodeChain(
  codecs: readonly PayloadCodec[],
  payloads: Payload[],
  context: SerializationContext | undefined,
): Promise<Payload[]> {
  let out = payloads;
  for (let i = codecs.length - 1; i >= 0; i--) out = await codecs[i]!.decode(out, context);
  return out;
}

function reasonOf(err: unknown, stage: 'codec' | 'converter'): UndecodableReason {
  if (err instanceof PayloadDecryptionError) return err.reason;
  if (stage === 'converter' && /unknown encoding/i.test((err as Error)?.message ?? '')) return 'unknown-encoding';
  return 'unreadable';
}

function isJson(p: Payload): boolean {
  const encoding = p.metadata?.['encoding'];
  return encoding !== undefined && encoding !== null && new TextDecoder().decode(encoding) === 'json/plain';
}

function sizeOf(p: Payload): number {
  let n = p.data?.length ?? 0;
  for (const [k, v] of Object.entries(p.metadata ?? {})) n += k.length + (v?.length ?? 0);
  return n;
}

/** The deployment's codecs in one codec, with workflow-owned payloads that fail replaced by a marker. */
export class MessageGuardCodec implements PayloadCodec {
  constructor(
    private readonly codecs: readonly PayloadCodec[],
    private readonly options: MessageGuardOptions = {},
  ) {}

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    let out = payloads;
    for (const codec of this.codecs) out = await codec.encode(out, context);
    return out;
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (context?.type !== 'workflow') return decodeChain(this.codecs, payloads, context);
    // One by one: a bad payload must not take the good ones of the same activation with it.
    return Promise.all(payloads.map((p) => this.decodeOwned(p, context)));
  }

  private async decodeOwned(payload: Payload, context: WorkflowSerializationContext): Promise<Payload> {
    const workflowId = context.workflowId;
    let decoded: Payload;
    try {
      [decoded] = (await decodeChain(this.codecs, [payload], context)) as [Payload];
    } catch (err) {
      return this.refuse(payload, workflowId, reasonOf(err, 'codec'));
    }
    try {
      // What the workflow's payload converter will do inside the sandbox: if it throws here, it would throw there.
      defaultPayloadConverter.fromPayload(decoded);
    } catch (err) {
      return this.refuse(payload, workflowId, reasonOf(err, 'converter'));
    }
    // JSON.parse reads any depth; the workflow's walks over what it parsed recurse. Refused by a loop over the text.
    if (isJson(decoded) && decoded.data !== undefined && decoded.data !== null) {
      if (textDepth(new TextDecoder().decode(decoded.data)) > MAX_JSON_DEPTH)
        return this.refuse(payload, workflowId, 'too-deep');
    }
    return decoded;
  }

  private refuse(payload: Payload, workflowId: string, reason: UndecodableReason): Payload {
    const bytes = sizeOf(payload);
    this.options.onRefused?.({ workflowId, reason, bytes });
    return defaultPayloadConverter.toPayload(undecodableMarker(reason, bytes));
  }
}

/** Refused: the guard checks payloads with the default payload converter, the only one Ledgerloop's workflows use. */
export class MessageGuardConfigError extends Error {
  override readonly name = 'MessageGuardConfigError';
}

/**
 * The worker's data converter: `converter` (the client's, from `dataConverterFromEnv`, or none) with its codecs
 * behind the message guard. Always returns a converter: a worker without keys needs the guard as much (junk
 * labelled `binary/encrypted` fails its payload converter).
 */
export function workerDataConverter(converter?: DataConverter, options: MessageGuardOptions = {}): DataConverter {
  if (converter?.payloadConverterPath !== undefined)
    throw new MessageGuardConfigError(
      'a custom payloadConverterPath is not supported: the message guard reads payloads with the default converter',
    );
  if (converter?.payloadCodecs?.some((c) => c instanceof MessageGuardCodec)) return converter;
  return { ...converter, payloadCodecs: [new MessageGuardCodec(converter?.payloadCodecs ?? [], options)] };
}
