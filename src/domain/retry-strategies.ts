/**
 * The retry strategies a run may ask for, each declared once with everything it decides. The workflow's call
 * runner (through `retryFor`, which narrows a strategy by the tool's idempotency contract), the authorizer (the
 * capability's key mode) and the dispatch activity (what an attempt after a possible send does before sending)
 * all read these declarations; none of them tests a strategy by its name. A new strategy is one entry here.
 */
import { blindRetryKey } from './identity';

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

export interface StrategyDeclaration {
  readonly description: string;
  /** Exists only to show a failure (the demo, the fault lab): production workers refuse it, nothing sent. */
  readonly lab: boolean;
  /** The key mode of the capability a call under this strategy is issued. */
  readonly keyMode: KeyMode;
  /** The key workflow dispatch `dispatch` (and Temporal attempt `attempt`) of a call sends. */
  keyFor(operationKey: string, dispatch: number, attempt?: number): string;
  /** An attempt after a possible send asks the downstream by key first, and sends only if nothing is there. */
  readonly lookUpBeforeResend: boolean;
  /** An attempt after a possible send is not sent past the downstream's key retention (it would charge again). */
  readonly guardRetention: boolean;
  /** What the call runner does after dispatch `dispatch` may have sent and brought no answer. */
  afterMaybeSent(dispatch: number): AfterMaybeSent;
}

const sameKey = (operationKey: string): string => operationKey;
const reconcile = (): AfterMaybeSent => 'reconcile';

export const STRATEGIES = {
  blind_retry: {
    description:
      'a naive loop: every attempt is a new request under a fresh key (shown only to prove the double charge)',
    lab: true,
    keyMode: 'derived',
    keyFor: blindRetryKey,
    lookUpBeforeResend: false,
    guardRetention: false,
    afterMaybeSent: (dispatch) => (dispatch < 2 ? 'send_again' : 'assume_failed'),
  },
  check_receipt: {
    description: 'reconcile by key (ask the downstream for the receipt) before any retry',
    lab: false,
    keyMode: 'exact',
    keyFor: sameKey,
    lookUpBeforeResend: true,
    guardRetention: false,
    afterMaybeSent: reconcile,
  },
  same_key_replay: {
    description: 'retry under the same key; the downstream idempotency record returns the retained result',
    lab: false,
    keyMode: 'exact',
    keyFor: sameKey,
    lookUpBeforeResend: false,
    guardRetention: true,
    afterMaybeSent: reconcile,
  },
} as const satisfies Record<string, StrategyDeclaration>;

export type RetryStrategy = keyof typeof STRATEGIES;

/** The declaration of `strategy` (a name from the run's input; checked by the client and the CLI). */
export function strategyOf(strategy: RetryStrategy): StrategyDeclaration {
  return STRATEGIES[strategy];
}
