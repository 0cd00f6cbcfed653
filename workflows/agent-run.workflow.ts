/**
 * The agent-run workflow. The model only proposes; this code decides. Handlers first, over the run's one state
 * (`AgentRun`, run.ts); then the run itself: plan, validate, key, decide, record intent, dispatch, settle, next
 * turn, until the model says done, a budget or the deadline ends the run, a failed effect is compensated, or an
 * operator stops it (stops.ts).
 */
import { ApplicationFailure, setHandler } from '@temporalio/workflow';
import { Failure } from '../src/domain/failures';
import { checkRunInput } from '../src/domain/run-input-check';
import type { AgentRunInput, AgentRunResult } from '../src/domain/run';
import { handleApprovalDecisions } from './approvals';
import { ledgerQuery, retryAccountingQuery } from './definitions';
import { handleCancelRequests, handleOperatorResolutions } from './operator';
import { AgentRun } from './run';

export async function agentRun(raw: AgentRunInput): Promise<AgentRunResult> {
  // Any input at all may arrive: one that does not fit fails the run, typed, never a workflow task.
  const checked = checkRunInput(raw);
  if (!checked.ok)
    throw ApplicationFailure.create({ type: Failure.RunInputInvalid, nonRetryable: true, message: checked.message });
  const run = new AgentRun(checked.input);

  // Queries: the ledger (events, projection, hash) and the retry accounting per dependency.
  setHandler(ledgerQuery, (upTo?: number) => run.ledger.snapshot(upTo));
  setHandler(retryAccountingQuery, () => run.retryAccounting());
  // Updates: each verifies its sender's identity token and checks the policy the run holds.
  handleApprovalDecisions(run.approvals);
  handleOperatorResolutions(run.ledger, run.show, run.heldPolicy);
  const cancelledBy = handleCancelRequests(run.ledger, run.scope, run.heldPolicy, run.who);

  return run.execute(cancelledBy);
}
