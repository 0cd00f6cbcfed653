/**
 * A workflow interceptor for the "every way out" cases: bundled only into their test bundle. Counting from a run's
 * first `dispatchTool` scheduling, it throws at the n-th await the workflow hands to Temporal (an activity or a
 * timer, which every `sleep` and every `condition` with a timeout starts) instead of scheduling it, once. What it
 * throws is what the call path can meet there: `DeadlineTooClose`, or a cancellation. The run's memo says where
 * (`injectThrow: { at, kind }`); a run without it is left alone.
 */
import { CancelledFailure } from '@temporalio/common';
import { workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { DeadlineTooClose } from '../../src/domain/activity-presets';

interface Plan {
  readonly at: number;
  readonly kind: 'deadline' | 'cancel';
}

function planOf(): Plan | undefined {
  const p = workflowInfo().memo?.['injectThrow'] as Plan | undefined;
  return p && typeof p.at === 'number' ? p : undefined;
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  let seen = -1; // -1 until the first dispatch is scheduled; then the index of the await being scheduled
  const maybeThrow = (isDispatch: boolean): void => {
    // Read when the run schedules something: the memo is not known yet when the factory runs.
    const plan = planOf();
    if (plan === undefined) return;
    if (seen < 0 && !isDispatch) return;
    seen += 1;
    if (seen !== plan.at) return;
    throw plan.kind === 'deadline'
      ? new DeadlineTooClose(`injected at await ${plan.at} after the first send`)
      : new CancelledFailure(`injected at await ${plan.at} after the first send`);
  };
  return {
    outbound: [
      {
        scheduleActivity(input, next) {
          maybeThrow(input.activityType === 'dispatchTool');
          return next(input);
        },
        startTimer(input, next) {
          maybeThrow(false);
          return next(input);
        },
      },
    ],
  };
};
