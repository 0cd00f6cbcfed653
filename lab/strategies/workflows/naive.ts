/**
 * The lab's naive loop, `blind_retry`: what an agent loop without Ledgerloop does with a lost response. Every
 * retry goes out under a fresh key, so the downstream cannot tell it from a new intent (the double charge), and
 * after a second dispatch brings no answer it calls the call FAILED without evidence (the lie in the record).
 *
 * It is not part of the runtime. Importing this module installs it in the importing process (the dispatch
 * activity, the authorizer, the client's check) and, bundled as `LAB_STRATEGY_WORKFLOW_MODULE`, in a workflow
 * bundle (the run's input check and its call runner). A production worker has neither, and refuses a run that
 * names it before anything is sent: the client with `StrategyForbiddenError`, the workflow with
 * `Run.InputInvalid`, the dispatch activity with `Strategy.Forbidden`. Workflow-safe: no Node modules.
 */
import {
  installStrategy,
  type AfterMaybeSent,
  type MaybeSent,
  type RetryStrategy,
  type StrategyDeclaration,
} from '../../../src/domain/retry-strategies';

declare module '../../../src/domain/strategy-names' {
  interface StrategyNames {
    blind_retry: true;
  }
}

/** The error code of a call the naive loop gave up on: FAILED, with no evidence that nothing happened. */
export const ASSUMED_FAILED = 'Naive.AssumedFailed';

/**
 * The key the naive loop sends: a fresh key per try, which is exactly the bug it demonstrates. A workflow-level
 * re-dispatch (`dispatch` n > 1) adds `~retry<n>`, a Temporal retry of the activity (`attempt` n > 1) adds
 * `~a<n>`. Every derived key starts with the operation key, which is what a `derived` capability allows.
 */
export function blindRetryKey(operationKey: string, dispatch: number, attempt = 1): string {
  const perDispatch = dispatch <= 1 ? operationKey : `${operationKey}~retry${dispatch}`;
  return attempt <= 1 ? perDispatch : `${perDispatch}~a${attempt}`;
}

/** Dispatch once more, then give up: FAILED under `ASSUMED_FAILED`, recorded by the loop itself. */
function giveUpAfterTwo(unknown: MaybeSent): AfterMaybeSent {
  if (unknown.dispatch < 2) return 'send_again';
  unknown.record({
    type: 'ToolResultRecorded',
    logicalCallId: unknown.call.logicalCallId,
    state: 'FAILED',
    errorCode: ASSUMED_FAILED,
    attempts: 0,
    replayed: false,
  });
  return { ...unknown.call, state: 'FAILED', error: { code: ASSUMED_FAILED, message: unknown.cause } };
}

export const BLIND_RETRY: StrategyDeclaration = {
  description: 'a naive loop: every attempt is a new request under a fresh key (shown only to prove the double charge)',
  narrowedByContract: false,
  keyMode: 'derived',
  keyFor: blindRetryKey,
  lookUpBeforeResend: false,
  afterMaybeSent: giveUpAfterTwo,
};

/** The strategies the lab installs: they exist to show a failure. */
export const LAB_STRATEGIES: readonly RetryStrategy[] = ['blind_retry'];
export const isLabStrategy = (s: string): boolean => (LAB_STRATEGIES as readonly string[]).includes(s);

installStrategy('blind_retry', BLIND_RETRY);
