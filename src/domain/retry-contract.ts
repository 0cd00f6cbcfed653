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
 *
 * `retryFor` is the one place that turns the pair into behaviour: the keys a call sends, the capability's key
 * mode, whether a retry may send again, and what follows a dispatch that may have sent. The workflow's call
 * runner, the authorizer and the dispatch activity all ask it; none decides by the strategy's name.
 */
import { blindRetryKey } from './identity';
import type { RetryStrategy } from './run';
import type { IdempotencyContract } from './tool';

/** What a capability lets the holder send: the operation key only, or also keys derived from it (`<key>~…`). */
export type KeyMode = 'exact' | 'derived';

/** After a dispatch that may have reached the downstream and brought no answer. */
export type AfterMaybeSent =
  /** Ask the downstream by key (and seal it): the only honest settlement. */
  | 'reconcile'
  /** The naive loop: dispatch again under a fresh key. */
  | 'send_again'
  /** The naive loop, out of dispatches: call it failed without evidence. This is the bug it demonstrates. */
  | 'assume_failed';

export interface CallRetry {
  /** The strategy the dispatch activity applies to this call's retries. */
  readonly strategy: RetryStrategy;
  /** Whether the call may be sent again at all once an attempt may have reached the downstream. */
  readonly mayResend: boolean;
  /** The key mode the call's capability is issued with. */
  readonly keyMode: KeyMode;
  /** The key workflow dispatch `dispatch` (and Temporal attempt `attempt`) of the call sends. */
  keyFor(operationKey: string, dispatch: number, attempt?: number): string;
  /** What the call runner does after dispatch `dispatch` may have sent and brought no answer. */
  afterMaybeSent(dispatch: number): AfterMaybeSent;
}

/** The capability key mode a strategy needs: only the naive loop sends keys other than the operation key. */
export function keyModeFor(strategy: RetryStrategy): KeyMode {
  return strategy === 'blind_retry' ? 'derived' : 'exact';
}

const NAIVE: CallRetry = {
  strategy: 'blind_retry',
  mayResend: true,
  keyMode: 'derived',
  keyFor: blindRetryKey,
  afterMaybeSent: (dispatch) => (dispatch < 2 ? 'send_again' : 'assume_failed'),
};

function governed(strategy: RetryStrategy, mayResend: boolean): CallRetry {
  return { strategy, mayResend, keyMode: 'exact', keyFor: (key) => key, afterMaybeSent: () => 'reconcile' };
}

export function retryFor(runStrategy: RetryStrategy, contract: IdempotencyContract): CallRetry {
  if (runStrategy === 'blind_retry') return NAIVE;
  switch (contract) {
    case 'idempotent_by_key':
      return governed(runStrategy, true);
    case 'reconcilable_by_lookup':
      return governed('check_receipt', true);
    case 'none':
      return governed('check_receipt', false);
  }
}
