/**
 * The outbox relay: publishes pending outbox rows to their consumer over HTTP and then acknowledges them.
 *
 * Delivery is at least once. A publish carries `Idempotency-Key: <event id>`, `X-Fence: <row fence>` and
 * `X-Intent-At: <row written at>` on the idempotency contract, so the consumer deduplicates by event id, refuses
 * a stale owner's fence, and refuses a row older than its retention window (`Idempotency.IntentExpired`: the
 * row is dead-lettered for an operator rather than delivered under a key whose record may have been pruned). The relay
 * logs each attempt before sending; if it dies after sending and before acknowledging, the row stays pending
 * and the next relay publishes it again (the consumer acknowledges the duplicate without a second effect).
 *
 * Rows are published one at a time in write order; a transient failure (or a 403 refusing the relay's own
 * capability) stops the pass: order is kept, the row is retried on the next poll. A permanent refusal of the
 * event itself dead-letters the row for an operator.
 */
import type { Database } from 'better-sqlite3';
import { hashCanonical } from '../../src/domain/canonical';
import type { DownstreamClient, SendOutcome } from '../../src/downstream/client';
import { RELAY_ISSUER, signCapability } from '../../src/capability/capability';
import type { CapabilitySigningKey } from '../../src/capability/capability-keys';
import {
  DUPLICATE_EVENT_REASON,
  EVENTS_ROUTE,
  EVENTS_SCOPE,
  RELAY_PRINCIPAL,
} from '../../src/capability/events-contract';
import { finishAttempt, pendingRows, startAttempt, type DeliveryDecision, type OutboxRow } from './outbox';

/** How long a delivery capability the relay signs stays valid (one per publish attempt). */
const CAPABILITY_TTL_MS = 60_000;
/** The consumer: the audience of every capability the relay signs. */
const CONSUMER = 'notifications';

/** Options of `OutboxRelay`. */
export interface OutboxRelayOptions {
  readonly db: Database;
  /** The consumer (the notifications service). */
  readonly target: DownstreamClient;
  /** Delay between passes; default 200 ms. */
  readonly pollMs?: number;
  /** Rows read per pass; default 50. */
  readonly batchSize?: number;
  /** What the crash fault does; default `process.kill(process.pid, 'SIGKILL')`. */
  readonly crash?: () => void;
  /**
   * The relay's own Ed25519 signing key (LEDGERLOOP_RELAY_SIGNING_KEY; not the workers' dispatch key). Each
   * publish attempt then carries a fresh capability for exactly its event id, payload, tenant and the event
   * scope, for the notifications service only; the consumer trusts this key's kid for that scope alone.
   */
  readonly capabilityKey?: CapabilitySigningKey;
}

/** What happened to one row in a pass. */
export interface PublishResult {
  readonly eventId: string;
  readonly decision: DeliveryDecision;
  readonly outcome: string;
}

/** Decides what a publish outcome means for the row, with a short label for the attempt log. */
export function decideDelivery(outcome: SendOutcome): { decision: DeliveryDecision; label: string } {
  switch (outcome.kind) {
    case 'ok':
      return { decision: 'acknowledge', label: outcome.replayed ? 'duplicate_acknowledged' : 'delivered' };
    case 'rejected':
      if (outcome.reason === DUPLICATE_EVENT_REASON) return { decision: 'acknowledge', label: 'duplicate_consumed' };
      // The relay's own credentials (missing or wrong key, clock skew), not the event: keep it for a fixed relay.
      if (outcome.status === 403) return { decision: 'retry', label: `refused ${outcome.code}` };
      return { decision: 'dead_letter', label: `rejected ${outcome.status} ${outcome.reason ?? outcome.code}` };
    case 'in_progress':
      return { decision: 'retry', label: 'consumer_in_progress' };
    case 'unavailable':
    case 'response_lost':
      return { decision: 'retry', label: `${outcome.kind}: ${outcome.reason}`.slice(0, 500) };
  }
}

/** The relay loop of one process. */
export class OutboxRelay {
  private readonly db: Database;
  private readonly target: DownstreamClient;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly crash: () => void;
  private readonly capabilityKey: CapabilitySigningKey | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private crashAt: number | undefined;
  /** Publishes sent by this process (not persisted; the database has the attempts). */
  publishes = 0;
  /** The last error a pass hit (e.g. a busy database), for diagnosis. */
  lastError: string | undefined;

  constructor(options: OutboxRelayOptions) {
    this.db = options.db;
    this.target = options.target;
    this.pollMs = options.pollMs ?? 200;
    this.batchSize = options.batchSize ?? 50;
    this.crash = options.crash ?? (() => process.kill(process.pid, 'SIGKILL'));
    this.capabilityKey = options.capabilityKey;
  }

  /** Arms the crash fault: the process dies after the n-th publish from now, before acknowledging it. */
  armCrash(afterPublishes = 1): void {
    this.crashAt = this.publishes + afterPublishes;
  }

  /** Disarms the crash fault. */
  disarmCrash(): void {
    this.crashAt = undefined;
  }

  /** Whether the crash fault is armed. */
  get crashArmed(): boolean {
    return this.crashAt !== undefined;
  }

  /** Starts polling (first pass at once). */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const loop = (): void => {
      this.running = this.publishPending()
        .catch((err: unknown) => {
          this.lastError = err instanceof Error ? err.message : String(err);
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.pollMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  /** Stops polling and waits for the pass in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: publishes pending rows in order until done or a transient failure; returns what happened. */
  async publishPending(): Promise<PublishResult[]> {
    const results: PublishResult[] = [];
    for (const row of pendingRows(this.db, this.batchSize)) {
      if (this.stopped) break;
      const result = await this.publish(row);
      results.push(result);
      if (result.decision === 'retry') break;
    }
    return results;
  }

  private async publish(row: OutboxRow): Promise<PublishResult> {
    const attemptId = startAttempt(this.db, row);
    const capability = this.capabilityFor(row);
    const outcome = await this.target.send(EVENTS_ROUTE, row.payload, {
      key: row.eventId,
      fence: row.fence,
      intentAt: new Date(row.createdAt).toISOString(),
      ...(capability === undefined ? {} : { capability }),
    });
    this.publishes += 1;
    if (this.crashAt !== undefined && this.publishes >= this.crashAt) {
      this.crashAt = undefined;
      this.crash(); // published, not acknowledged
    }
    const { decision, label } = decideDelivery(outcome);
    finishAttempt(this.db, attemptId, row, decision, label);
    return { eventId: row.eventId, decision, outcome: label };
  }

  /** A capability for exactly this delivery attempt, when the relay has a key; undefined otherwise. */
  private capabilityFor(row: OutboxRow): string | undefined {
    if (this.capabilityKey === undefined) return undefined;
    const tenant = String(row.payload['tenant'] ?? '');
    const nowMs = Date.now();
    const grant = {
      operationKey: row.eventId,
      keyMode: 'exact' as const,
      argumentsHash: hashCanonical(row.payload),
      tenant,
      principalId: RELAY_PRINCIPAL,
      scope: EVENTS_SCOPE,
      action: 'notifications.consume_event',
      resource: `${tenant}/event/${row.eventId}`,
      policyVersion: 'outbox-relay/1',
      expiresAt: new Date(nowMs + CAPABILITY_TTL_MS).toISOString(),
    };
    return signCapability(grant, this.capabilityKey, { audience: CONSUMER, issuer: RELAY_ISSUER, nowMs }).token;
  }
}
