/**
 * Tool dispatch and reconciliation activities: the only code that reaches a downstream on a run's behalf, through
 * the tool's transport (a Ledgerloop service, a function, an HTTP API). No retries happen here: Temporal retries the
 * activity (one retry owner), and every attempt after one that may have sent asks the recovery table first.
 *
 * One attempt, in named steps (activities/dispatch/): begin (number, fence, key, deadline) → check the resend (the
 * table: look up, guard the key's retention, or refuse) → sign at dispatch → send and classify.
 */
import type {
  DispatchRequest,
  DispatchResponse,
  ReconcileRequest,
  ReconcileResponse,
} from '../src/domain/activity-contracts';
import { beginAttempt } from './dispatch/attempt';
import { resolveDispatchDeps, type DispatchDeps } from './dispatch/deps';
import { reconcileCall } from './dispatch/reconcile';
import { checkResend } from './dispatch/resend';
import { sendAndClassify, signAttempt } from './dispatch/send';

export { fenceFor } from './dispatch/attempt';
export type { DispatchDeps } from './dispatch/deps';

export function createDispatchActivities(deps: DispatchDeps) {
  const resolved = resolveDispatchDeps(deps);
  return {
    async dispatchTool(req: DispatchRequest): Promise<DispatchResponse> {
      const attempt = beginAttempt(resolved, req);
      const next = await checkResend(resolved, attempt);
      if ('answer' in next) return next.answer;
      return sendAndClassify(attempt, signAttempt(resolved, attempt));
    },
    reconcileCall: (req: ReconcileRequest): Promise<ReconcileResponse> => reconcileCall(resolved, req),
  };
}
