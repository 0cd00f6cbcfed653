/**
 * The queries and updates every run installs over its state, whoever hosts it (the agent-run workflow, a governed
 * session in the team's own workflow): the ledger and the retry accounting; the approval, operator and cancel
 * updates, each verifying its sender's identity token and checking the policy the run holds. Signals are taken by
 * none: any that arrives is logged and dropped.
 */
import {
  ApplicationFailure,
  log,
  setDefaultSignalHandler,
  setHandler,
  type CancellationScope,
} from '@temporalio/workflow';
import { Failure } from '../src/domain/failures';
import { refuseUndecodable, undecodable } from '../src/domain/undecodable';
import type { Policy } from '../src/domain/policy-format';
import { handleApprovalDecisions, type Approvals } from './approvals';
import { ledgerQuery, retryAccountingQuery, type RetryAccounting } from './definitions';
import type { CancelledBy } from './ending';
import type { Ledger } from './ledger';
import type { Who } from './model';
import { handleCancelRequests, handleOperatorResolutions } from './operator';

/** What the handlers read and act on. */
export interface HandledRun {
  readonly ledger: Ledger;
  readonly approvals: Approvals;
  readonly who: Who;
  /** The scope a verified cancel request cancels. */
  readonly scope: CancellationScope;
  readonly show: () => void;
  readonly heldPolicy: () => Policy | undefined;
  retryAccounting(): RetryAccounting;
}

/** Install the run's handlers; returns who asked a verified cancel, for the stop. */
export function installRunHandlers(run: HandledRun): CancelledBy {
  setHandler(ledgerQuery, (upTo?: unknown) => run.ledger.snapshot(eventCount(upTo)));
  setHandler(retryAccountingQuery, () => run.retryAccounting());
  handleApprovalDecisions(run.approvals);
  handleOperatorResolutions(run.ledger, run.show, run.heldPolicy);
  const cancelledBy = handleCancelRequests(run.ledger, run.scope, run.heldPolicy, run.who);
  setDefaultSignalHandler((name, ...args) => {
    const why = args.map(undecodable).find((u) => u !== undefined);
    log.warn('ignored a signal: this workflow takes none', {
      signal: name.slice(0, 100),
      ...(why ? { undecodable: why.reason } : {}),
    });
  });
  return cancelledBy;
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
