/**
 * The project's worker: its own tools (bundled into the workflow code), its ticketing service, its policy and
 * its model, through the runtime's `createWorker`. No file of the runtime changes for this project.
 *
 *   TICKETING_URL=http://127.0.0.1:4300 npm run worker     # TEMPORAL_ADDRESS, default localhost:7233
 */
import { ensureSearchAttributes } from 'ledgerloop';
import { createWorker, scriptedModel, type CreateWorkerOptions, type ModelProvider } from 'ledgerloop/worker';
import { readProjectKeys, type ProjectKeys } from './keys';
import { DEFAULT_TICKETING_URL, readPolicy, TASK_QUEUE, TOOLS_MODULE } from './project';
import { ticketingScenarios } from './scenarios';

export interface TicketingWorkerOptions {
  readonly ticketingUrl: string;
  readonly keys: Pick<ProjectKeys, 'capabilityKey' | 'issuers'>;
  readonly taskQueue?: string;
  readonly address?: string;
  readonly namespace?: string;
  /** Default: the scripted model with this project's scenarios. */
  readonly model?: ModelProvider;
  /** Passed through (tests set `maxCachedWorkflows: 0` to replay every task). */
  readonly extra?: Partial<CreateWorkerOptions>;
}

export function startTicketingWorker(opts: TicketingWorkerOptions) {
  return createWorker({
    ...opts.extra,
    tools: TOOLS_MODULE,
    services: { ticketing: opts.ticketingUrl },
    policy: readPolicy(),
    model: opts.model ?? scriptedModel(ticketingScenarios),
    capabilityKey: opts.keys.capabilityKey,
    identityIssuers: opts.keys.issuers,
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    ...(opts.address ? { address: opts.address } : {}),
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
  });
}

if (require.main === module) {
  (async () => {
    const address = process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233';
    // A server started by hand lacks Ledgerloop's search attributes: register what is missing.
    await ensureSearchAttributes(address);
    const { worker } = await startTicketingWorker({
      address,
      ticketingUrl: process.env['TICKETING_URL'] ?? DEFAULT_TICKETING_URL,
      keys: readProjectKeys(),
    });
    console.log(`ticketing worker polling task queue ${TASK_QUEUE}; Ctrl-C stops it`);
    await worker.run();
  })().catch((err: unknown) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    process.exit(1);
  });
}
