/**
 * The SQLite idempotency layer every Ledgerloop downstream service reuses. It owns three tables:
 *
 *   - `idem_records`: one idempotency record per (tenant, operation key) (the protocol's OperationRecord);
 *   - `idem_requests`: one row per admitted mutating request (valid, capability verified, intent time usable):
 *     dispatch evidence, never pruned. A request refused before the rules is only counted in `idem_refusals`
 *     (one counter per code), so a flood of refused requests cannot grow the database;
 *   - `idem_effects`: one row per committed business effect (effect evidence, never pruned).
 *
 * Records are scoped by tenant: the same operation key under two tenants is two records, and a lookup or seal
 * for one tenant never reads or writes another's.
 *
 * Only records expire (lazily, on each request, after the declared retention window); seals never do, and the
 * request and effect logs are audit evidence that is never pruned. A key cannot commit twice across pruning:
 * every request carries its intent time, and one older than the retention window is refused (`IntentExpired`)
 * before the rules run, so no request can arrive after its key's record was pruned and be admitted.
 *
 * A mutation runs in two phases so a fault can hold the record `in_progress` between them:
 * `begin` (transaction: prune, decide by the rules, insert `in_progress`) then `commit` (transaction: apply the
 * business effect and mark `completed`, or record a typed rejection as `failed`) or `abort` (roll back).
 */
import type { Database } from 'better-sqlite3';
import { BusinessRejection } from './business-rejection';
import { writeTransaction } from './sqlite-write';
import {
  DownstreamErrorCode,
  type KeyStats,
  type OperationRecord,
  type RefusalCounts,
} from '../src/downstream/protocol';
import {
  checkedRetention,
  decide,
  intentRefusal,
  migrateIdempotencySchema,
  type IntentRefusalCode,
  RECORD_COLUMNS,
  refusalCode,
  toOperationRecord,
  type ConflictCode,
  type RecordRow,
} from './idempotency-rows';

export type { ConflictCode } from './idempotency-rows';
export { BusinessRejection, type BusinessRejectionOptions } from './business-rejection';

/** Default idempotency-key retention: 24 hours, like Stripe's documented pruning window. */
export const DEFAULT_RETENTION_MS = 86_400_000;

export { MAX_INTENT_SKEW_MS, type IntentRefusalCode } from './idempotency-rows';

/** What `apply` returns when the business effect was performed. */
export interface AppliedEffect {
  readonly receipt: string;
  /** The JSON result retained and replayed for the key. */
  readonly result: unknown;
  /** The effect kind logged in `idem_effects`; defaults to the request scope. */
  readonly kind?: string;
}

/** Performs the business effect synchronously inside the commit transaction, or throws `BusinessRejection`. */
export type ApplyEffect = (db: Database) => AppliedEffect;

/** One mutating request as the store sees it. */
export interface MutationRequest {
  /** The tenant the request is for (its body's `tenant`, bound by its capability); records are per tenant. */
  readonly tenant: string;
  readonly key: string;
  readonly argumentsHash: string;
  readonly fence: number;
  /** Which effect the key protects, e.g. `wallet.charge`; a key reused under another scope is a mismatch. */
  readonly scope: string;
  /**
   * When the caller recorded the intent (epoch ms, from `X-Intent-At`). Older than the retention window: the
   * request is refused (`IntentExpired`); not finite or in the future beyond `MAX_INTENT_SKEW_MS`: refused
   * (`IntentTimeMissing`). Nothing is recorded under the key either way.
   */
  readonly intentAtMs: number;
}

/** The request identity the request log keeps. */
export type LoggedRequest = Pick<MutationRequest, 'tenant' | 'key' | 'argumentsHash' | 'fence'>;

/** Returned by `begin` when the request may perform the effect; pass it to `commit` or `abort`. */
export interface PendingOperation extends MutationRequest {
  readonly requestId: number;
}

/** The phase-1 decision. */
export type BeginResult =
  | { readonly kind: 'proceed'; readonly pending: PendingOperation }
  | { readonly kind: 'replayed' | 'retained_failure'; readonly requestId: number; readonly record: OperationRecord }
  | {
      readonly kind: 'conflict';
      readonly requestId: number;
      readonly code: ConflictCode;
      readonly message: string;
      readonly record: OperationRecord;
    }
  | {
      /** Refused for its intent time before the rules ran: nothing recorded under the key, only counted. */
      readonly kind: 'refused';
      /** -1: a refused request has no row in the request log. */
      readonly requestId: number;
      readonly code: IntentRefusalCode;
      readonly message: string;
    };

/** The phase-2 outcome. `lost` means the in-progress record vanished (pruned) and nothing was committed. */
export type CommitResult =
  | { readonly kind: 'completed'; readonly record: OperationRecord }
  | { readonly kind: 'failed'; readonly record: OperationRecord }
  | { readonly kind: 'lost' };

/** Result of the one-shot `runIdempotent`. */
export type RunResult = Exclude<BeginResult, { kind: 'proceed' }> | CommitResult;

/** Result of `lookup`. A sealed key reads as not found and sealed, for ever (seals are never pruned). */
export type LookupResult =
  | { readonly kind: 'found'; readonly record: OperationRecord }
  | { readonly kind: 'not_found'; readonly sealed: boolean };

/** Options of `IdempotencyStore`. */
export interface IdempotencyStoreOptions {
  readonly db: Database;
  /** How long a record is retained after its creation. Default 24 h. */
  readonly retentionMs?: number;
  /** Injectable clock (epoch milliseconds), for tests. */
  readonly now?: () => number;
}

/** The idempotency rules of `src/downstream/protocol.ts`, decided in SQLite transactions. */
export class IdempotencyStore {
  readonly retentionMs: number;
  private readonly db: Database;
  private readonly now: () => number;

  constructor(options: IdempotencyStoreOptions) {
    this.db = options.db;
    this.retentionMs = checkedRetention(options.retentionMs, DEFAULT_RETENTION_MS);
    this.now = options.now ?? Date.now;
    migrateIdempotencySchema(this.db);
  }

  /**
   * Deletes records whose retention expired, except seals; returns how many. Called lazily by `begin` and
   * `lookup`. A seal is the downstream's promise that nothing will ever commit under its key: it stays.
   */
  prune(): number {
    return this.db.prepare(`DELETE FROM idem_records WHERE expires_at <= ? AND status <> 'sealed'`).run(this.now())
      .changes;
  }

  /** Why a request's intent time is refused, or undefined when it is admissible now. */
  intentRefusal(intentAtMs: number): { code: IntentRefusalCode; message: string } | undefined {
    return intentRefusal(intentAtMs, this.now(), this.retentionMs);
  }

  /** Every write of the store takes the write lock first: the file is shared with the orders relay (writeTransaction). */
  private writing<T>(fn: () => T): T {
    return writeTransaction(this.db, fn);
  }

  /**
   * Phase 1: decides by the rules and logs the (admitted) request; on `proceed` the key is now `in_progress`.
   * A request refused for its intent time is counted, not logged.
   */
  begin(request: MutationRequest): BeginResult {
    return this.writing((): BeginResult => {
      this.prune();
      const refusal = this.intentRefusal(request.intentAtMs);
      if (refusal !== undefined) {
        this.countRefusal(refusal.code);
        return { kind: 'refused', requestId: -1, ...refusal };
      }
      const now = this.now();
      const row = this.getRow(request.tenant, request.key);
      if (row === undefined) {
        this.db
          .prepare(
            `INSERT INTO idem_records (tenant, operation_key, arguments_hash, scope, status, fence, created_at, expires_at)
             VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?)`,
          )
          .run(
            request.tenant,
            request.key,
            request.argumentsHash,
            request.scope,
            request.fence,
            now,
            now + this.retentionMs,
          );
        const requestId = this.logRequest(request, 'accepted');
        return { kind: 'proceed', pending: { ...request, requestId } };
      }
      const decision = decide(row, request);
      if (decision.kind === 'conflict') {
        const requestId = this.logRequest(request, decision.code);
        return { ...decision, requestId, record: toOperationRecord(row) };
      }
      if (request.fence > row.fence) {
        this.db
          .prepare('UPDATE idem_records SET fence = ? WHERE tenant = ? AND operation_key = ?')
          .run(request.fence, request.tenant, request.key);
      }
      const record = toOperationRecord({ ...row, fence: Math.max(row.fence, request.fence) });
      if (decision.kind === 'in_progress') {
        const requestId = this.logRequest(request, DownstreamErrorCode.InProgress);
        const message = `operation ${request.key} is still in progress`;
        return { kind: 'conflict', requestId, code: DownstreamErrorCode.InProgress, message, record };
      }
      return { kind: decision.kind, requestId: this.logRequest(request, decision.kind), record };
    });
  }

  /**
   * Phase 2: runs `apply` in a savepoint of one transaction that also marks the record `completed` and logs the
   * effect. A `BusinessRejection` rolls the savepoint back and retains the record as `failed`. Any other error
   * rolls everything back, removes the in-progress record (nothing was committed) and is rethrown.
   */
  commit(
    pending: PendingOperation,
    apply: ApplyEffect,
    rejectionCode: string = DownstreamErrorCode.Rejected,
  ): CommitResult {
    try {
      return this.writing((): CommitResult => {
        const row = this.getRow(pending.tenant, pending.key);
        if (row === undefined || row.status !== 'in_progress' || row.arguments_hash !== pending.argumentsHash) {
          this.setOutcome(pending.requestId, 'lost');
          return { kind: 'lost' };
        }
        let applied: AppliedEffect;
        try {
          applied = this.db.transaction(() => apply(this.db))();
        } catch (err) {
          if (!(err instanceof BusinessRejection)) throw err;
          const error = { ...err.details, error: rejectionCode, reason: err.reason, message: err.message };
          this.db
            .prepare(`UPDATE idem_records SET status = 'failed', error_json = ? WHERE tenant = ? AND operation_key = ?`)
            .run(JSON.stringify(error), pending.tenant, pending.key);
          for (const key of err.sealKeys) this.insertSeal(pending.tenant, key, true);
          this.setOutcome(pending.requestId, 'failed');
          return { kind: 'failed', record: this.mustGet(pending.tenant, pending.key) };
        }
        this.db
          .prepare(
            `UPDATE idem_records SET status = 'completed', receipt = ?, result_json = ? WHERE tenant = ? AND operation_key = ?`,
          )
          .run(applied.receipt, JSON.stringify(applied.result ?? null), pending.tenant, pending.key);
        this.db
          .prepare('INSERT INTO idem_effects (tenant, operation_key, receipt, kind, at) VALUES (?, ?, ?, ?, ?)')
          .run(pending.tenant, pending.key, applied.receipt, applied.kind ?? pending.scope, this.now());
        this.setOutcome(pending.requestId, 'completed');
        return { kind: 'completed', record: this.mustGet(pending.tenant, pending.key) };
      });
    } catch (err) {
      this.abort(pending, 'error');
      throw err;
    }
  }

  /** Rolls back an in-progress record created by `begin` (nothing committed); `outcome` goes to the request log. */
  abort(pending: PendingOperation, outcome: string): void {
    this.writing(() => {
      this.db
        .prepare(
          `DELETE FROM idem_records WHERE tenant = ? AND operation_key = ? AND status = 'in_progress' AND arguments_hash = ?`,
        )
        .run(pending.tenant, pending.key, pending.argumentsHash);
      this.setOutcome(pending.requestId, outcome);
    });
  }

  /** Both phases at once, for callers that have nothing to do in between. */
  runIdempotent(request: MutationRequest, apply: ApplyEffect): RunResult {
    const begun = this.begin(request);
    return begun.kind === 'proceed' ? this.commit(begun.pending, apply) : begun;
  }

  /**
   * The record of `tenant` under `key` (never another tenant's). With `seal`, a missing key is sealed for that
   * tenant in the same transaction.
   */
  lookup(tenant: string, key: string, options: { readonly seal?: boolean } = {}): LookupResult {
    return this.writing((): LookupResult => {
      this.prune();
      const row = this.getRow(tenant, key);
      if (row !== undefined) {
        return row.status === 'sealed'
          ? { kind: 'not_found', sealed: true }
          : { kind: 'found', record: toOperationRecord(row) };
      }
      // The idempotency record may be pruned after its retention window; the effect log is not. A committed
      // effect is still found by its key (receipt only), so reconciliation never concludes "no effect" wrongly.
      const effect = this.db
        .prepare(
          'SELECT receipt, kind, at FROM idem_effects WHERE tenant = ? AND operation_key = ? ORDER BY id LIMIT 1',
        )
        .get(tenant, key) as { receipt: string; kind: string; at: number } | undefined;
      if (effect !== undefined) {
        const at = new Date(effect.at).toISOString();
        return {
          kind: 'found',
          record: {
            operationKey: key,
            argumentsHash: '',
            scope: effect.kind,
            status: 'completed',
            receipt: effect.receipt,
            fence: 0,
            createdAt: at,
            expiresAt: at,
            pruned: true,
          },
        };
      }
      if (options.seal !== true) return { kind: 'not_found', sealed: false };
      this.insertSeal(tenant, key, false);
      return { kind: 'not_found', sealed: true };
    });
  }

  /**
   * Deletes every `in_progress` record and marks its accepted requests `orphaned`; returns how many records.
   * Call it once at service start, before serving: the effect and the `completed` mark commit in one
   * transaction, so an `in_progress` record found at start belongs to a process that died before committing,
   * and no effect exists under it. The key is free again for a same-key retry. Even if another live process
   * still held one of them, nothing doubles: its `commit` finds the record gone and commits nothing (`lost`).
   */
  recoverOrphans(): number {
    return this.writing((): number => {
      this.db
        .prepare(
          `UPDATE idem_requests SET outcome = 'orphaned' WHERE outcome = 'accepted' AND (tenant, operation_key) IN
             (SELECT tenant, operation_key FROM idem_records WHERE status = 'in_progress')`,
        )
        .run();
      return this.db.prepare(`DELETE FROM idem_records WHERE status = 'in_progress'`).run().changes;
    });
  }

  /**
   * Admitted-request and effect counts under `key` (all tenants), or under every key starting with `key` when
   * `prefix`. Refused requests are not under any key: see `refusals`.
   */
  stats(key: string, prefix = false): KeyStats {
    const where = prefix ? 'substr(operation_key, 1, length(?)) = ?' : 'operation_key = ?';
    const params = prefix ? [key, key] : [key];
    const count = (table: string): number =>
      (this.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(...params) as { n: number }).n;
    return { key, prefix, dispatchCount: count('idem_requests'), businessEffectCount: count('idem_effects') };
  }

  /** Logs an admitted mutating request (one the rules decide); returns its row id. */
  logRequest(request: LoggedRequest, outcome: string): number {
    const info = this.db
      .prepare(
        'INSERT INTO idem_requests (tenant, operation_key, arguments_hash, fence, received_at, outcome) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(request.tenant, request.key, request.argumentsHash, request.fence, this.now(), outcome);
    return Number(info.lastInsertRowid);
  }

  /**
   * Counts a request refused before the rules (invalid body or hash, no capability, unusable intent time, a seal
   * by GET): one counter per code, codes outside the closed set under `other`; a lookup's or seal's under
   * `lookup:<code>`. Nothing else is stored, so the table has at most twice the closed set's rows.
   */
  countRefusal(code: string, route: 'mutation' | 'lookup' = 'mutation'): void {
    this.db
      .prepare(
        `INSERT INTO idem_refusals (code, count, last_at) VALUES (?, 1, ?)
         ON CONFLICT (code) DO UPDATE SET count = count + 1, last_at = excluded.last_at`,
      )
      .run(route === 'lookup' ? `lookup:${refusalCode(code)}` : refusalCode(code), this.now());
  }

  /** The refusal counters. */
  refusals(): RefusalCounts {
    const rows = this.db.prepare('SELECT code, count FROM idem_refusals ORDER BY code').all() as {
      code: string;
      count: number;
    }[];
    const sum = (pick: (code: string) => boolean): number =>
      rows.filter((r) => pick(r.code)).reduce((n, r) => n + r.count, 0);
    return {
      total: sum(() => true),
      mutations: sum((c) => !c.startsWith('lookup:')),
      lookups: sum((c) => c.startsWith('lookup:')),
      byCode: Object.fromEntries(rows.map((r) => [r.code, r.count])),
    };
  }

  /** Updates the outcome of a logged request. */
  setOutcome(requestId: number, outcome: string): void {
    this.db.prepare('UPDATE idem_requests SET outcome = ? WHERE id = ?').run(outcome, requestId);
  }

  /**
   * Seals `key` when it has no record; `ifAbsent` ignores an existing record instead of failing. A seal is
   * never pruned; its `expires_at` only says until when the retention of an ordinary record would have run.
   */
  private insertSeal(tenant: string, key: string, ifAbsent: boolean): void {
    const now = this.now();
    this.db
      .prepare(
        `INSERT ${ifAbsent ? 'OR IGNORE ' : ''}INTO idem_records
           (tenant, operation_key, arguments_hash, scope, status, fence, created_at, expires_at)
         VALUES (?, ?, '', '', 'sealed', 0, ?, ?)`,
      )
      .run(tenant, key, now, now + this.retentionMs);
  }

  private getRow(tenant: string, key: string): RecordRow | undefined {
    return this.db
      .prepare(`SELECT ${RECORD_COLUMNS} FROM idem_records WHERE tenant = ? AND operation_key = ?`)
      .get(tenant, key) as RecordRow | undefined;
  }

  private mustGet(tenant: string, key: string): OperationRecord {
    const row = this.getRow(tenant, key);
    if (row === undefined) throw new Error(`idempotency record ${key} vanished inside its transaction`);
    return toOperationRecord(row);
  }
}
