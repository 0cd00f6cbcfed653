/**
 * The fault lab's workflow interceptor, bundled only into the lab's workflow bundle (`writeWorkflowBundle(file,
 * { faults: true })`). It marks the crash point `workflow.before_intent` where a dispatch is scheduled: in the same
 * workflow task that records the call's intent, so a kill there loses the task, the intent and the dispatch
 * together. It changes no command; outside runs the fault runner started it does nothing (workflow-hook.ts).
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { workflowCrashPoint } from './workflow-hook';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity(input, next) {
        if (input.activityType === 'dispatchTool') workflowCrashPoint('workflow.before_intent');
        return next(input);
      },
    },
  ],
});
