/**
 * The baseline's worker: the team's own `Worker.create`, with `AiSdkPlugin` (the model call as an activity) and
 * the refund activities.
 */
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { createRefundActivities } from './activities';

export interface RefundWorkerOptions {
  readonly connection: NativeConnection;
  readonly taskQueue: string;
  readonly paymentsUrl: string;
  /** Any AI SDK provider: `createOpenAICompatible(...)`, or the scripted one in tests. */
  readonly modelProvider: ProviderV4;
  readonly extra?: Partial<WorkerOptions>;
}

export function createRefundWorker(opts: RefundWorkerOptions): Promise<Worker> {
  return Worker.create({
    ...opts.extra,
    connection: opts.connection,
    taskQueue: opts.taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createRefundActivities(opts.paymentsUrl),
    plugins: [new AiSdkPlugin({ modelProvider: opts.modelProvider })],
  });
}
