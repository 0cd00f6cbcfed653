/**
 * Bench switch `search-attributes`, its summaries half: a workflow interceptor module (bundled into the cell's
 * bundle only) that drops the summary of every activity, local activity and timer the run schedules, so none is
 * recorded in history. The run computes its summaries as before; only their bytes leave.
 */
import type { ActivityOptions, LocalActivityOptions, WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { SwitchMark } from '../marks';

const MARK: SwitchMark = 'ledgerloop-bench-switch:search-attributes';

function unsummarized<O extends ActivityOptions | LocalActivityOptions>(options: O): O {
  if (options === undefined) throw new Error(`${MARK}: an activity scheduled without options`);
  return { ...options, summary: undefined };
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity: (input, next) => next({ ...input, options: unsummarized(input.options) }),
      scheduleLocalActivity: (input, next) => next({ ...input, options: unsummarized(input.options) }),
      startTimer: (input, next) =>
        next(input.options ? { ...input, options: { ...input.options, summary: undefined } } : input),
    },
  ],
});
