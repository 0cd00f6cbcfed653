/**
 * The fault lab's workflow interceptor, bundled only into the lab's workflow bundle (`writeWorkflowBundle(file,
 * { faults: true })`). It changes no command; outside runs the fault runner started it does nothing
 * (workflow-hook.ts).
 *
 * - It marks the crash point `workflow.before_intent` where a dispatch is scheduled: in the same workflow task that
 *   records the call's intent, so a kill there loses the task, the intent and the dispatch together.
 * - As each activation begins it reports the ledger as the run's own `ledger` query handler (a pure read) would
 *   answer. A new activation of a run begins only once the server has its last workflow task (this code runs no
 *   local activities), so what it reports is durable: what a fresh worker must rebuild. The worker keeps the latest
 *   report per run, and an in-process crash line carries it. (At the end of an activation the ledger may hold what
 *   a kill is about to lose, with times a fresh worker's retry of that task would not repeat.) A query from the
 *   runner cannot be relied on to reach the worker in the half second between the run's start and a kill, so
 *   without this report the comparison would hang on a poll winning a race.
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
// Internal to the SDK, and used only here, in the lab's bundle: the handler table a query would be served from.
import { maybeGetActivator } from '@temporalio/workflow/lib/global-attributes';
import { ledgerQuery } from '../../../workflows/definitions';
import type { LedgerSnapshot } from '../../../workflows/ledger';
import { reportLedgerMark, workflowCrashPoint, type LedgerMark } from './hook';

/** The ledger's hash and length as the run's query handler would answer now (undefined: no handler yet). */
function ledgerMark(): LedgerMark | undefined {
  const handler = maybeGetActivator()?.queryHandlers.get(ledgerQuery.name)?.handler;
  if (handler === undefined) return undefined;
  try {
    const snapshot = handler() as LedgerSnapshot;
    return { projectionHash: snapshot.projectionHash, eventCount: snapshot.eventCount };
  } catch {
    return undefined; // a lab hook never fails a workflow task; the runner then has no mark for this task
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  internals: [
    {
      activate(input, next) {
        if (input.batchIndex === 0) reportLedgerMark(ledgerMark);
        next(input);
      },
    },
  ],
  outbound: [
    {
      scheduleActivity(input, next) {
        if (input.activityType === 'dispatchTool') workflowCrashPoint('workflow.before_intent');
        return next(input);
      },
    },
  ],
});
