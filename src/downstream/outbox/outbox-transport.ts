/**
 * The fenced local outbox as a transport: a wrapper over the transport of a downstream that takes no fence (a vendor
 * HTTP API, a function over an SDK). An attempt's send first writes the intent to the outbox table in the team's own
 * database and claims it under the attempt's fence, in one transaction (outbox-store.ts); only a claim may send, and
 * the relay (relay.ts) sends the row under the downstream's own key and records the outcome on it. So:
 *
 * - a worker fenced out by a newer attempt is refused in that transaction (`409 Fence.Stale`, as a Ledgerloop
 *   service refuses one) and sends nothing;
 * - a row that holds the downstream's answer replays it, and the lookup reads the row first;
 * - what an attempt does after a lost response is still the one recovery table's (src/domain/recovery.ts): this
 *   wrapper promises nothing the downstream does not (its `promises` are the downstream's), and keeps no rules.
 *
 * Like every transport it never throws: a database it cannot reach before the claim commits is `unavailable`
 * (nothing was sent).
 */
import { DownstreamErrorCode } from '../protocol';
import type { SendOutcome } from '../classify';
import {
  reasonOf,
  type AttemptCall,
  type LookupAnswer,
  type LookupCall,
  type Retention,
  type Transport,
} from '../transport';
import type { ClaimResult, OutboxRow, OutboxStore } from './outbox-store';
import { recordOf, relayRow, replayOf } from './relay';

export class OutboxTransport implements Transport {
  constructor(
    private readonly outbox: OutboxStore,
    private readonly downstream: Transport,
  ) {}

  async send(call: AttemptCall): Promise<SendOutcome> {
    if (call.signal.aborted || Date.now() >= call.deadlineAtMs)
      return { kind: 'unavailable', reason: 'not sent: the attempt was cancelled or reached its deadline' };
    let claim: ClaimResult;
    try {
      claim = await this.outbox.claim({
        tenant: call.intent.tenant,
        key: call.key,
        tool: call.tool.name,
        argumentsHash: call.intent.argumentsHash,
        body: call.body,
        intentAt: call.intentAt,
        fence: call.fence,
      });
    } catch (err) {
      return { kind: 'unavailable', reason: `not sent: the outbox could not be written (${reasonOf(err)})` };
    }
    switch (claim.kind) {
      case 'stale':
        return {
          kind: 'rejected',
          status: 409,
          code: DownstreamErrorCode.StaleFence,
          body: {
            error: DownstreamErrorCode.StaleFence,
            message: `the outbox row holds fence ${claim.rowFence}; fence ${call.fence} sends nothing`,
          },
        };
      case 'mismatch':
        return {
          kind: 'rejected',
          status: 409,
          code: DownstreamErrorCode.ArgumentsMismatch,
          body: { error: DownstreamErrorCode.ArgumentsMismatch, message: 'the key was written with other arguments' },
        };
      case 'settled':
        return replayOf(claim.row);
      case 'claimed':
        return relayRow(this.outbox, this.downstream, claim.row, call);
    }
  }

  /**
   * The row first: a recorded answer is the answer, and no row means no intent was ever written, so nothing was
   * sent through the outbox (unsealed all the same: the table decides what that proves). A row sent without an
   * answer is asked of the downstream, and what it finds is recorded on the row.
   */
  async lookup(call: LookupCall): Promise<LookupAnswer> {
    let row: OutboxRow | undefined;
    try {
      row = await this.outbox.read(call.intent.tenant, call.key);
    } catch (err) {
      return { kind: 'unreachable', reason: `the outbox could not be read (${reasonOf(err)})` };
    }
    if (row === undefined) return { kind: 'not_found', sealed: false };
    if (row.status === 'answered' || row.status === 'rejected') return answerOf(row);
    const found = await this.downstream.lookup({ ...call, body: row.body, key: row.key });
    if (found.kind === 'found' && found.status === 'completed') {
      const recorded = recordOf({
        kind: 'ok',
        status: 200,
        body: found.result ?? null,
        replayed: true,
        ...(found.receipt !== undefined ? { receipt: found.receipt } : {}),
      });
      await this.outbox.record(row.tenant, row.key, row.fence, recorded).catch(() => undefined);
    }
    return found;
  }

  retention(): Promise<Retention> {
    return this.downstream.retention();
  }
}

/** A settled row as a lookup's answer. */
function answerOf(row: OutboxRow): LookupAnswer {
  const replayed = replayOf(row);
  if (replayed.kind === 'ok')
    return {
      kind: 'found',
      status: 'completed',
      result: replayed.body,
      ...(replayed.receipt !== undefined ? { receipt: replayed.receipt } : {}),
    };
  const code = replayed.kind === 'rejected' ? (replayed.reason ?? replayed.code) : 'Downstream.Rejected';
  return { kind: 'found', status: 'failed', errorCode: code, errorMessage: 'the downstream refused it (outbox row)' };
}
