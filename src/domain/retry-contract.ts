/**
 * What a retry may do is the tool's to say, not the run's. A run asks for a strategy; each tool's declared
 * idempotency contract narrows it for that tool's calls:
 *
 * | contract                 | a retry after a possible send                                           |
 * |--------------------------|-------------------------------------------------------------------------|
 * | `idempotent_by_key`      | the run's strategy: resend under the same key, or look up first          |
 * | `reconcilable_by_lookup` | look the key up first (`check_receipt`), resend only when nothing is there |
 * | `none`                   | never resend: settle by lookup, or leave it UNKNOWN for an operator      |
 *
 * `blind_retry` is the naive loop the demo and the fault lab show; production workers refuse it.
 */
import type { RetryStrategy } from './run';
import type { IdempotencyContract } from './tool';

export interface CallRetry {
  /** The strategy the dispatch activity applies to this call's retries. */
  readonly strategy: RetryStrategy;
  /** Whether the call may be sent again at all once an attempt may have reached the downstream. */
  readonly mayResend: boolean;
}

export function retryFor(runStrategy: RetryStrategy, contract: IdempotencyContract): CallRetry {
  if (runStrategy === 'blind_retry') return { strategy: 'blind_retry', mayResend: true };
  switch (contract) {
    case 'idempotent_by_key':
      return { strategy: runStrategy, mayResend: true };
    case 'reconcilable_by_lookup':
      return { strategy: 'check_receipt', mayResend: true };
    case 'none':
      return { strategy: 'check_receipt', mayResend: false };
  }
}
