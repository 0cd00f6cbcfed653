/**
 * What a retry may do is the tool's to say, not the run's. A run asks for a strategy (retry-strategies.ts); each
 * tool's declared idempotency contract narrows it for that tool's calls:
 *
 * | contract                 | a retry after a possible send                                           |
 * |--------------------------|-------------------------------------------------------------------------|
 * | `idempotent_by_key`      | the run's strategy: resend under the same key, or look up first          |
 * | `reconcilable_by_lookup` | look the key up first (`check_receipt`), resend only when nothing is there |
 * | `none`                   | never resend: settle by lookup, or leave it UNKNOWN for an operator      |
 *
 * A lab strategy (`blind_retry`, the naive loop the demo and the fault lab show) is taken as it is: it exists to
 * show what ignoring the contract costs, and production workers refuse it.
 */
import { strategyOf, type KeyMode, type RetryStrategy, type StrategyDeclaration } from './retry-strategies';
import type { IdempotencyContract } from './tool';

export type { AfterMaybeSent, KeyMode } from './retry-strategies';

/** A call's retry behaviour: the strategy the tool's contract leaves, and whether it may send again at all. */
export interface CallRetry extends StrategyDeclaration {
  /** The strategy the dispatch activity applies to this call's retries. */
  readonly strategy: RetryStrategy;
  /** Whether the call may be sent again at all once an attempt may have reached the downstream. */
  readonly mayResend: boolean;
}

/** The capability key mode a strategy needs. */
export function keyModeFor(strategy: RetryStrategy): KeyMode {
  return strategyOf(strategy).keyMode;
}

function narrowed(
  runStrategy: RetryStrategy,
  contract: IdempotencyContract,
): { strategy: RetryStrategy; mayResend: boolean } {
  if (strategyOf(runStrategy).lab) return { strategy: runStrategy, mayResend: true };
  switch (contract) {
    case 'idempotent_by_key':
      return { strategy: runStrategy, mayResend: true };
    case 'reconcilable_by_lookup':
      return { strategy: 'check_receipt', mayResend: true };
    case 'none':
      return { strategy: 'check_receipt', mayResend: false };
  }
}

export function retryFor(runStrategy: RetryStrategy, contract: IdempotencyContract): CallRetry {
  const { strategy, mayResend } = narrowed(runStrategy, contract);
  return { ...strategyOf(strategy), strategy, mayResend };
}
