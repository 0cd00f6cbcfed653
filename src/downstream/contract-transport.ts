/**
 * The transport of a service on Ledgerloop's own HTTP contract: the existing `Downstream` client (or the wrapper a
 * worker was given), as a `Transport`. The service declares its key retention at `GET /v1/contract`; a readable
 * one is kept for the life of the worker (a failure is asked again next time).
 */
import type { LookupAnswer } from '../domain/recovery';
import type { Downstream } from './client';
import type { SendOutcome } from './classify';
import { reasonOf, type AttemptCall, type LookupCall, type Retention, type Transport } from './transport';

export class ContractTransport implements Transport {
  /** The service's declared retention, once read. */
  private readable: number | undefined;

  constructor(
    private readonly service: string,
    private readonly downstream: Downstream,
    private readonly route: string,
  ) {}

  send(call: AttemptCall): Promise<SendOutcome> {
    return this.downstream.send(this.route, call.body, {
      key: call.key,
      argumentsHash: call.intent.argumentsHash,
      fence: call.fence,
      intentAt: call.intentAt,
      signal: call.signal,
      ...(call.capability !== undefined ? { capability: call.capability } : {}),
    });
  }

  async lookup(call: LookupCall): Promise<LookupAnswer> {
    const found = await this.downstream.lookup(call.key, {
      tenant: call.intent.tenant,
      seal: call.seal,
      ...(call.capability !== undefined ? { capability: call.capability } : {}),
      ...(call.signal !== undefined ? { signal: call.signal } : {}),
    });
    if (found.kind === 'refused') return { kind: 'refused', code: found.code, reason: found.reason };
    if (found.kind !== 'found') return found;
    const r = found.record;
    if (r.status === 'sealed') return { kind: 'not_found', sealed: true };
    return {
      kind: 'found',
      status: r.status,
      ...(r.receipt !== undefined ? { receipt: r.receipt } : {}),
      ...(r.result !== undefined ? { result: r.result } : {}),
      ...(r.error !== undefined ? { errorCode: r.error.error, errorMessage: r.error.message } : {}),
    };
  }

  /** The retention the service declares. Fails closed: no positive `idempotencyRetentionMs` is unreadable. */
  async retention(): Promise<Retention> {
    if (this.readable !== undefined) return { ms: this.readable };
    try {
      const contract = await this.downstream.contract();
      const ms: unknown = (contract as { idempotencyRetentionMs?: unknown } | undefined)?.idempotencyRetentionMs;
      if (typeof ms === 'number' && Number.isFinite(ms) && ms > 0) {
        this.readable = ms;
        return { ms };
      }
      return {
        unreadable: `${this.service} declares no positive idempotencyRetentionMs (${JSON.stringify(ms ?? null)})`,
      };
    } catch (err) {
      return { unreadable: `${this.service}: ${reasonOf(err)}` };
    }
  }
}
