/** Reading one run for `show`, `audit`, `approve` and `resolve`: its description, ledger and pending approvals. */
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { readLedger } from '../../host/client/runs';
import { pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import type { CliSession } from '../connect';

export interface RunView {
  readonly handle: WorkflowHandle;
  readonly description: WorkflowExecutionDescription;
  readonly ledger: LedgerSnapshot;
  readonly pending: readonly PendingApproval[];
}

/** Describes the run first (an unknown id fails fast as RunNotFoundError), then asks its worker. */
export async function describeRun(
  s: CliSession,
  workflowId: string,
): Promise<{ handle: WorkflowHandle; description: WorkflowExecutionDescription }> {
  const handle = s.client.workflow.getHandle(workflowId);
  return { handle, description: await handle.describe() };
}

/** The ledger (optionally its first `upTo` events) and the pending approvals, each answered within `timeoutMs`. */
export async function readRun(s: CliSession, workflowId: string, timeoutMs: number, upTo?: number): Promise<RunView> {
  const { handle, description } = await describeRun(s, workflowId);
  const tq = description.taskQueue;
  const ledger = await s.answered('ledger query', workflowId, timeoutMs, () => readLedger(handle, upTo), tq);
  const pending = await s.answered(
    'pendingApprovals query',
    workflowId,
    timeoutMs,
    () => handle.query(pendingApprovalsQuery),
    tq,
  );
  return { handle, description, ledger, pending };
}
