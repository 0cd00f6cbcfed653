/**
 * The agent-run workflow. The model only proposes; this code decides. Handlers first, over the run's one state
 * (`AgentRun`, run.ts); then the run itself: plan, validate, key, decide, record intent, dispatch, settle, next
 * turn, until the model says done, a budget or the deadline ends the run, a failed effect is compensated, or an
 * operator stops it (stops.ts).
 */
import { ApplicationFailure, log, setDefaultSignalHandler, setHandler } from '@temporalio/workflow';
import { refuseUndecodable, undecodable } from '../src/domain/undecodable';
import { Failure } from '../src/domain/failures';
import { checkRunInput } from '../src/domain/run-input-check';
import type { AgentRunInput, AgentRunResult } from '../src/domain/run';
import { handleApprovalDecisions } from './approvals';
import { ledgerQuery, retryAccountingQuery } from './definitions';
import { handleCancelRequests, handleOperatorResolutions } from './operator';
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

  // Queries: the ledger (events, projection, hash) and the retry accounting per dependency.
  setHandler(ledgerQuery, (upTo?: unknown) => run.ledger.snapshot(eventCount(upTo)));
  setHandler(retryAccountingQuery, () => run.retryAccounting());
  // Updates: each verifies its sender's identity token and checks the policy the run holds.
  handleApprovalDecisions(run.approvals);
  handleOperatorResolutions(run.ledger, run.show, run.heldPolicy);
  const cancelledBy = handleCancelRequests(run.ledger, run.scope, run.heldPolicy, run.who);
  // This workflow takes no signals: any that arrives (an unknown name, an undecodable payload) is logged, and dropped.
  setDefaultSignalHandler((name, ...args) => {
    const why = args.map(undecodable).find((u) => u !== undefined);
    log.warn('ignored a signal: this workflow takes none', {
      signal: name.slice(0, 100),
      ...(why ? { undecodable: why.reason } : {}),
    });
  });

  return run.execute(cancelledBy);
}

/** The `ledger` query's argument: none, or a whole number of events; anything else is refused (typed). */
function eventCount(upTo: unknown): number | undefined {
  refuseUndecodable(upTo, 'the ledger query');
  if (upTo === undefined || upTo === null) return undefined;
  if (typeof upTo === 'number' && Number.isSafeInteger(upTo) && upTo >= 0) return upTo;
  throw ApplicationFailure.create({
    type: Failure.MessageInvalid,
    nonRetryable: true,
    message: 'the ledger query takes upTo: a whole number of events (0 or more), or nothing',
  });
}
