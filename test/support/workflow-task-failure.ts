/**
 * The first workflow task failure of a run: a workflow whose code throws while the SDK evaluates it (a missing
 * global, a refused API) does not fail; its task is retried with the same history, forever. This reads the first
 * `WorkflowTaskFailed` event's failure (asking the history until there is one), then terminates the run.
 */
import type { WorkflowHandle } from '@temporalio/client';

export interface TaskFailure {
  readonly message: string;
  readonly stack: string;
}

export async function firstWorkflowTaskFailure(handle: WorkflowHandle, timeoutMs = 30_000): Promise<TaskFailure> {
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const history = await handle.fetchHistory();
      const failure = history.events?.find((e) => e.workflowTaskFailedEventAttributes)
        ?.workflowTaskFailedEventAttributes?.failure;
      if (failure) return { message: failure.message ?? '', stack: failure.stackTrace ?? '' };
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') throw new Error(`the run ended ${status.name} without a failed workflow task`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no workflow task failed within ${timeoutMs} ms`);
  } finally {
    await handle.terminate('read its workflow task failure').catch(() => undefined);
  }
}
