/** Builds a Ledgerloop worker: the workflow bundle plus activities wired to their dependencies. */
import os from 'node:os';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { DownstreamClient } from '../downstream/client';
import { WORKFLOWS_PATH } from './bundle';

export const DEFAULT_TASK_QUEUE = 'ledgerloop';

export interface LedgerloopWorkerOptions {
  readonly address: string;
  readonly namespace?: string;
  readonly taskQueue?: string;
  /** Base URL per downstream service name, e.g. `{ wallet: 'http://127.0.0.1:4100' }`. */
  readonly services: Readonly<Record<string, string>>;
  /** A prebuilt bundle file (fast start); without it the workflows are bundled in process. */
  readonly workflowBundlePath?: string;
  readonly identity?: string;
  readonly plannerLogFile?: string;
  /** 0 forces every workflow task to replay the whole history (used by tests). */
  readonly maxCachedWorkflows?: number;
  /** HTTP timeout for downstream calls; must stay below the tool attempt timeout. */
  readonly downstreamTimeoutMs?: number;
}

export async function createLedgerloopWorker(opts: LedgerloopWorkerOptions): Promise<{ worker: Worker; connection: NativeConnection; identity: string }> {
  const identity = opts.identity ?? `ledgerloop-worker@${os.hostname()}:${process.pid}`;
  const services = Object.fromEntries(
    Object.entries(opts.services).map(([name, baseUrl]) => [name, new DownstreamClient({ baseUrl, ...(opts.downstreamTimeoutMs ? { timeoutMs: opts.downstreamTimeoutMs } : {}) })]),
  );
  const connection = await NativeConnection.connect({ address: opts.address });
  const options: WorkerOptions = {
    connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    identity,
    activities: createActivities({ services, workerIdentity: identity, planner: opts.plannerLogFile ? { requestLogFile: opts.plannerLogFile } : {} }),
    ...(opts.workflowBundlePath ? { workflowBundle: { codePath: opts.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
    // A killed worker's sticky queue would hold the next workflow task for the default 10 s; 2 s is enough here.
    stickyQueueScheduleToStartTimeout: '2s',
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
  };
  const worker = await Worker.create(options);
  return { worker, connection, identity };
}
