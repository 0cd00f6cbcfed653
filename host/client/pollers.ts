/**
 * Whether any worker polls a task queue: the pollers the server saw recently on its workflow task queue
 * (DescribeTaskQueue), as the Temporal UI's "Workers" tab shows them.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** The workers that polled `taskQueue`'s workflow tasks recently (identities). */
export async function workflowPollers(client: Client, namespace: string, taskQueue: string): Promise<string[]> {
  const r = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (r.pollers ?? []).map((p) => p.identity ?? '?');
}
