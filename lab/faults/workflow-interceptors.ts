/**
 * The fault lab's workflow interceptor, bundled only into the lab's workflow bundle (`writeWorkflowBundle(file,
 * { faults: true })`). It changes no command; outside runs the fault runner started it does nothing
 * (workflow-hook.ts).
 *
 * - It marks the crash point `workflow.before_intent` where a dispatch is scheduled: in the same workflow task that
 *   records the call's intent, so a kill there loses the task, the intent and the dispatch together.
 * - As each activation concludes it reports the ledger as the run's own `ledger` query handler (a pure read) would
 *   answer. The worker keeps the latest report per run, and an in-process crash line carries it: for a crash in an
 *   activity, the task that scheduled it (durable by then); for a crash inside a workflow task, the task before
 *   it (this task's own report would come after the crash point's sink call). Either way it is what a fresh worker
 *   must rebuild. A query from the runner cannot be relied on to reach the worker in the half second between the
 *   run's start and a kill, so without this report the comparison would hang on a poll winning a race.
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
// Internal to the SDK, and used only here, in the lab's bundle: the handler table a query would be served from.
import { maybeGetActivator } from '@temporalio/workflow/lib/global-attributes';
import { ledgerQuery } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { reportLedgerMark, workflowCrashPoint, type LedgerMark } from './workflow-hook';

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
      concludeActivation(input, next) {
        reportLedgerMark(ledgerMark);
        return next(input);
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
