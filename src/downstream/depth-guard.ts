/**
 * The one place a downstream's answer leaves its transport: every transport the worker resolves is wrapped here
 * (src/downstream/transports.ts, outside any decoration), so none can forget it. An answer body, a refusal's body or
 * a record a lookup found that nests deeper than `MAX_JSON_DEPTH` is replaced by a shallow `TooDeepMarker` before
 * anything serializes it: the payload converter's `JSON.stringify` would throw past about 4,000 levels, after the
 * effect, and the call would go through resends and reconciliation for an answer it already had. The workflow
 * settles the marker as SUCCEEDED with `Result.Invalid`, as it does a deep result (workflows/steps/settle.ts).
 */
import { shallowOrMarker } from '../domain/json-depth';
import type { LookupAnswer } from '../domain/recovery';
import type { SendOutcome } from './classify';
import type { AttemptCall, LookupCall, Retention, Transport } from './transport';

/** `sent` with its body replaced by the marker when it nests too deep; otherwise `sent` itself. */
export function shallowSent(sent: SendOutcome): SendOutcome {
  if (sent.kind !== 'ok' && sent.kind !== 'rejected') return sent;
  const body = shallowOrMarker(sent.body);
  return body === sent.body ? sent : { ...sent, body };
}

/** `found` with its record replaced by the marker when it nests too deep; otherwise `found` itself. */
export function shallowFound(found: LookupAnswer): LookupAnswer {
  if (found.kind !== 'found' || found.result === undefined) return found;
  const result = shallowOrMarker(found.result);
  return result === found.result ? found : { ...found, result };
}

/** `inner`, its answers bounded in depth. */
export class DepthGuardedTransport implements Transport {
  constructor(private readonly inner: Transport) {}

  async send(call: AttemptCall): Promise<SendOutcome> {
    return shallowSent(await this.inner.send(call));
  }

  async lookup(call: LookupCall): Promise<LookupAnswer> {
    return shallowFound(await this.inner.lookup(call));
  }

  retention(): Promise<Retention> {
    return this.inner.retention();
  }
}
