/**
 * Compensation by forward key, shared by every service whose effect can be offset (wallet refund, inventory
 * release, shipping cancellation).
 *
 * A compensation names its forward effect by the forward request's operation key, never by a receipt: the key
 * is known before the forward request is sent, so the saga can register (and run) the compensation even when
 * the forward outcome is UNKNOWN. The downstream then decides, atomically:
 *
 *   - the forward effect exists          -> offset it (once: a second offset is a business rejection);
 *   - the forward request is in progress -> 409 `Idempotency.InProgress`, nothing retained: retry later;
 *   - the forward key never committed    -> a 422 rejection with no effect, and the forward key is sealed in
 *                                           the same transaction, so a late forward request cannot commit
 *                                           after "nothing to compensate" was answered.
 */
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { DownstreamErrorCode } from '../src/downstream/protocol';
import { HttpError } from './http-kit';
import { BusinessRejection } from './idempotency-store';

/** An operation key as a compensation body names it: 1-255 visible ASCII characters, like `Idempotency-Key`. */
export const ForwardOperationKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'an operation key');

/** The idempotency status of the forward key, read inside the compensation's transaction. */
function forwardStatus(db: Database, tenant: string, forwardKey: string): string | undefined {
  const row = db
    .prepare('SELECT status FROM idem_records WHERE tenant = ? AND operation_key = ?')
    .get(tenant, forwardKey) as { status: string } | undefined;
  return row?.status;
}

/**
 * Refuses a compensation whose forward effect was not found in the service's business tables. Throws a 409
 * `HttpError` (not retained) while the forward key is in progress; otherwise a `BusinessRejection` with
 * `reason`, which seals the forward key (of the same tenant) when it has no record yet. Never returns.
 */
export function refuseMissingForward(
  db: Database,
  tenant: string,
  forwardKey: string,
  reason: string,
  what: string,
): never {
  const status = forwardStatus(db, tenant, forwardKey);
  if (status === 'in_progress') {
    throw new HttpError(
      409,
      DownstreamErrorCode.InProgress,
      `${what} ${forwardKey} is still in progress; retry the compensation once it settled`,
    );
  }
  const sealKeys = status === undefined ? [forwardKey] : [];
  throw new BusinessRejection(
    reason,
    `no committed ${what} under operation key ${forwardKey}; nothing to compensate`,
    // Whatever the status, no forward effect can commit under the key any more: it is sealed now, or already
    // sealed, or a retained failure, or completed under another scope (a key that is not a forward key).
    { forwardOperationKey: forwardKey, forwardStatus: status ?? 'none' },
    { sealKeys },
  );
}
