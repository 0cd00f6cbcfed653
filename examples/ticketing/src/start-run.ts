/**
 * Starts one governed run that opens a ticket, waits for it and prints its result and ledger summary.
 *
 *   npm run run-once -- "Printer on floor 3 is jammed"      # TEMPORAL_ADDRESS, default localhost:7233
 */
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { readLedger, startAgentRun, type AgentRunResult } from 'ledgerloop';
import { readProjectKeys, type ProjectKeys } from './keys';
import { TASK_QUEUE } from './project';

export interface TicketRun {
  readonly workflowId: string;
  readonly result: AgentRunResult;
  /** The ledger's event types, in order. */
  readonly events: readonly string[];
  readonly projectionHash: string;
  /** The run's Temporal history: the input of a replay (`replayHistory`). */
  readonly history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
}

export interface TicketRequest {
  readonly project: string;
  readonly title: string;
  readonly labels?: readonly string[];
  readonly due?: { readonly at: string; readonly zone: string };
}

/** Starts a run for alice of tenant acme that opens `ticket`, and waits for its result. */
export async function runTicket(
  client: Client,
  keys: Pick<ProjectKeys, 'issue'>,
  ticket: TicketRequest,
  opts: {
    readonly taskQueue?: string;
    readonly workflowId?: string;
    /** The scripted conversation (src/scenarios.ts); default `open-ticket`. */
    readonly scenario?: string;
    /** More variables for the scenario, e.g. `{ secondProject: 'archive' }` for `open-pair`. */
    readonly vars?: Readonly<Record<string, unknown>>;
  } = {},
): Promise<TicketRun> {
  const workflowId = opts.workflowId ?? `ticket-${Date.now()}`;
  const handle = await startAgentRun(client, {
    workflowId,
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    identityToken: await keys.issue('user:alice', 'acme', [], { purpose: 'start', run: workflowId }),
    input: {
      principal: { id: 'user:alice', tenant: 'acme' },
      goal: `Open a ticket: ${ticket.title}`,
      strategy: 'same_key_replay',
      planner: { kind: 'scripted', scenario: opts.scenario ?? 'open-ticket', vars: { ...ticket, ...opts.vars } },
      deadlineAt: new Date(Date.now() + 60_000).toISOString(),
    },
  });
  const result = await handle.result();
  const ledger = await readLedger(handle);
  return {
    workflowId,
    result,
    events: ledger.events.map((e) => e.type),
    projectionHash: ledger.projectionHash,
    history: await handle.fetchHistory(),
  };
}

if (require.main === module) {
  (async () => {
    const title = process.argv[2] ?? 'Printer on floor 3 is jammed';
    const connection = await Connection.connect({ address: process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233' });
    try {
      const run = await runTicket(new Client({ connection }), readProjectKeys(), {
        project: 'ops',
        title,
        labels: ['printer', 'floor-3'],
      });
      const { history: _history, ...printed } = run;
      console.log(JSON.stringify(printed, null, 2));
    } finally {
      await connection.close();
    }
  })().catch((err: unknown) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    process.exit(1);
  });
}
