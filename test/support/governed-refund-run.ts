/**
 * What the governed refund agents' integration tests share (examples/refund-ai-sdk: the AI SDK's and the Agents
 * SDK's): the customer's start with a verified identity token, the approval the run waits for, and a verified
 * approver's decision through the console's update.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { DevIssuer } from '../../src/identity/issue';
import { decideApprovalUpdate, pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import type { GovernedRefundRequest } from '../../examples/refund-ai-sdk/src/governed/workflows';

export const TENANT = 'acme';

export interface RefundRunner {
  readonly client: Client;
  readonly issuer: DevIssuer;
  readonly taskQueue: string;
  /** The workflow type the worker serves. */
  readonly workflowType: string;
}

/** Start the agent for `who` with a token naming `tokenFor` (the same, unless a test forges it). */
export async function startRefund<W extends (request: GovernedRefundRequest) => Promise<unknown>>(
  r: RefundRunner,
  message: string,
  who = 'user:alice',
  tokenFor = who,
): Promise<WorkflowHandle<W>> {
  const workflowId = `${r.workflowType}-${message.replace(/\W+/g, '-')}-${Date.now()}`;
  const request: GovernedRefundRequest = {
    principal: { id: who, tenant: TENANT },
    identityToken: await r.issuer.issueFor({ purpose: 'start', run: workflowId }, tokenFor, TENANT),
    message,
    deadlineAt: new Date(Date.now() + 10 * 60_000).toISOString(),
  };
  return r.client.workflow.start<W>(r.workflowType, {
    taskQueue: r.taskQueue,
    workflowId,
    args: [request] as Parameters<W>,
  });
}

/** The approval the run waits for (asked until it shows). */
export async function pendingApproval(handle: WorkflowHandle): Promise<PendingApproval> {
  for (;;) {
    const [first] = await handle.query(pendingApprovalsQuery);
    if (first) return first;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `approver` approves the pending call with a verified token holding the approver role. */
export async function approve(issuer: DevIssuer, handle: WorkflowHandle, p: PendingApproval, approver: string) {
  return handle.executeUpdate(decideApprovalUpdate, {
    args: [
      {
        logicalCallId: p.logicalCallId,
        argumentsHash: p.argumentsHash,
        policyVersion: p.policyVersion,
        token: await issuer.issueFor(
          { purpose: 'approve', run: handle.workflowId, call: p.logicalCallId },
          approver,
          TENANT,
          ['approver'],
        ),
        decision: 'approve',
      },
    ],
  });
}

export const eventTypes = (snap: LedgerSnapshot) => snap.events.map((e) => e.type);
