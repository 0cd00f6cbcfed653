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
 * A strategy that is not narrowed by contract (only one the repository's lab installs) is taken as it is. A
 * strategy this bundle does not serve (its input check refuses such a run before any call) is read as the
 * strictest: look up, never resend.
 */
import { STRATEGIES, strategyOf, type KeyMode, type RetryStrategy, type StrategyDeclaration } from './retry-strategies';
import type { IdempotencyContract } from './tool';

export type { AfterMaybeSent, KeyMode, MaybeSent } from './retry-strategies';

/** A call's retry behaviour: the strategy the tool's contract leaves, and whether it may send again at all. */
export interface CallRetry extends StrategyDeclaration {
  /** The strategy the dispatch activity applies to this call's retries. */
  readonly strategy: RetryStrategy;
  /** Whether the call may be sent again at all once an attempt may have reached the downstream. */
  readonly mayResend: boolean;
}

/** The capability key mode a strategy needs. */
export function keyModeFor(strategy: RetryStrategy): KeyMode {
  return strategyOf(strategy)?.keyMode ?? 'exact';
}

function narrowed(
  runStrategy: RetryStrategy,
  contract: IdempotencyContract,
): { strategy: RetryStrategy; mayResend: boolean } {
  const declared = strategyOf(runStrategy);
  if (declared === undefined) return { strategy: 'check_receipt', mayResend: false };
  if (!declared.narrowedByContract) return { strategy: runStrategy, mayResend: true };
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
  return { ...(strategyOf(strategy) ?? STRATEGIES.check_receipt), strategy, mayResend };
}
