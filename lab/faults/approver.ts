/**
 * The scripted human of a case: decides every pending approval of the run as `approver` says (approve or deny
 * first, renew or not when the same call comes back, after `afterMs`). A `publish_policy` fault at
 * policy.before_dispatch publishes its policy version while the call waits, before the decision.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../../workflows/definitions';
import type { DriverContext } from './drivers';
import { publishPolicy } from './lab';
import { SA } from '../../src/domain/search-attributes';
import { pause, unlessAborted, withDeadline } from './waits';

/** The scripted human: decides pending approvals; `publish_policy` at policy.before_dispatch goes first. */
export async function approver(ctx: DriverContext): Promise<void> {
  const decided = new Set<string>();
  const decisionsPerCall = new Map<string, number>();
  const policyFaults = ctx.pc.faults.filter((f) => f.do === 'publish_policy');
  let requests = 0;
  while (!ctx.done.aborted) {
    let pending: Awaited<ReturnType<typeof queryPending>> = [];
    try {
      // The run's search attribute says whether anything waits (the server answers, no worker is asked); only
      // then is the worker queried for what waits.
      if ((await unlessAborted(waiting(ctx), ctx.done)) === true)
        pending = (await unlessAborted(queryPending(ctx), ctx.done)) ?? [];
    } catch {
      /* no worker right now */
    }
    for (const p of pending) {
      const id = `${p.logicalCallId}|${p.policyVersion}|${p.requestedAt}`;
      if (decided.has(id)) continue;
      decided.add(id);
      requests += 1;
      for (const f of policyFaults.filter((pf) => pf.occurrence === requests)) {
        if (!ctx.policyFile || !f.policy) continue;
        publishPolicy(ctx.policyFile, f.policy);
        ctx.timeline.push({
          kind: 'policy_published',
          point: f.at,
          text: `published policy ${f.policy.version} while ${p.logicalCallId} waits under ${p.policyVersion}`,
        });
        ctx.timeline.push({
          kind: 'fault_fired',
          point: f.at,
          action: 'publish_policy',
          text: `policy ${f.policy.version} published`,
        });
      }
      const earlier = decisionsPerCall.get(p.logicalCallId) ?? 0;
      decisionsPerCall.set(p.logicalCallId, earlier + 1);
      const a = ctx.pc.approver;
      const decision = earlier === 0 ? a.decision : a.renew ? 'approve' : 'deny';
      const reason =
        earlier === 0 ? 'fault protocol approver' : `asked again (${p.reason}); the approver does not renew`;
      if (a.afterMs > 0) await sleep(a.afterMs);
      try {
        const token = await ctx.approverToken(p.logicalCallId);
        await withDeadline(ctx.link, 5_000, () =>
          ctx.handle.executeUpdate(decideApprovalUpdate, {
            args: [
              {
                logicalCallId: p.logicalCallId,
                argumentsHash: p.argumentsHash,
                policyVersion: p.policyVersion,
                token,
                decision,
                reason,
                ...(decision === 'approve' && a.ttlMs !== undefined ? { ttlMs: a.ttlMs } : {}),
              },
            ],
          }),
        );
        ctx.timeline.push({
          kind: 'approval_decided',
          text: `approver: ${decision} ${p.logicalCallId} under ${p.policyVersion}`,
        });
      } catch (err) {
        ctx.timeline.push({ kind: 'note', text: `approval decision refused: ${(err as Error).message}` });
      }
    }
    await pause(250, ctx.done);
  }
}

function queryPending(ctx: DriverContext) {
  return withDeadline(ctx.link, 2_000, () => ctx.handle.query(pendingApprovalsQuery));
}

/** Whether the run says approvals wait (`LedgerloopPendingApprovals` > 0); true when it cannot say (ask, then). */
async function waiting(ctx: DriverContext): Promise<boolean> {
  try {
    const d = await withDeadline(ctx.link, 2_000, () => ctx.handle.describe());
    const n = d.typedSearchAttributes.get(SA.pendingApprovals);
    return n === undefined || n > 0;
  } catch {
    return true;
  }
}
