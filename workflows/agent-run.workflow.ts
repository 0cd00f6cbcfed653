/**
 * The agent-run workflow. The model only proposes; this code decides. Handlers first, over the run's one state
 * (`AgentRun`, run.ts); then the run itself: plan, validate, key, decide, record intent, dispatch, settle, next
 * turn, until the model says done, a budget or the deadline ends the run, a failed effect is compensated, or an
 * operator stops it (stops.ts).
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { undecodable } from '../src/domain/undecodable';
import { Failure } from '../src/domain/failures';
import { checkRunInput } from '../src/domain/run-input-check';
import type { AgentRunInput, AgentRunResult } from '../src/domain/run';
import { installRunHandlers } from './handlers';
import { AgentRun } from './run';

export async function agentRun(raw: AgentRunInput): Promise<AgentRunResult> {
  // Any input at all may arrive: one that does not fit fails the run, typed, never a workflow task.
  const unreadable = undecodable(raw);
  if (unreadable)
    throw ApplicationFailure.create({
      type: Failure.RunInputInvalid,
      nonRetryable: true,
      message: `the run's input could not be decoded by this worker (${unreadable.reason}): nothing was run`,
    });
  const checked = checkRunInput(raw);
  if (!checked.ok)
    throw ApplicationFailure.create({ type: Failure.RunInputInvalid, nonRetryable: true, message: checked.message });
  const run = new AgentRun(checked.input);

  // Queries and updates (handlers.ts): each update verifies its sender's identity token.
  const cancelledBy = installRunHandlers(run);

  return run.execute(cancelledBy);
}
