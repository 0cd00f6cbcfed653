/**
 * One intent, one call, for whatever hosts the call runner (`AgentRun`'s turns, a governed session's tools): a
 * validated call whose operation key names an intent already made gets that intent's outcome, and nothing is
 * dispatched. The ledger's index by operation key finds the earlier call (every call is keyed before any is
 * called); `running` holds the outcomes of the calls sent through this instance, by call id, so a repeat that
 * arrives while the first is still running waits for it.
 */
import type { Observation } from '../../src/domain/activity-contracts';
import { runCall } from '../call-runner';
import type { RunModel, ValidatedCall } from '../model';
import { answerRepeat, earlierIntent } from './key';

export class IntentCalls {
  private readonly running = new Map<string, Promise<Observation>>();

  constructor(private readonly run: RunModel) {}

  /** The call's outcome: the earlier intent's when its key already has one, else its own run through `runCall`. */
  call(c: ValidatedCall): Promise<Observation> {
    const { ledger } = this.run;
    const inFlight = ledger.callsWithKey(c.operationKey).find((x) => this.running.has(x.logicalCallId));
    if (inFlight) {
      const id = inFlight.logicalCallId;
      return this.running.get(id)!.then((o) => answerRepeat(ledger, c, id, o));
    }
    const earlier = earlierIntent(ledger, c);
    if (earlier && earlier.state !== 'UNKNOWN') {
      const settledBefore: Observation = {
        logicalCallId: earlier.logicalCallId,
        providerCallId: '',
        toolName: c.tool.name,
        state: earlier.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
        ...(earlier.errorCode ? { error: { code: earlier.errorCode, message: earlier.errorCode } } : {}),
      };
      return Promise.resolve(answerRepeat(ledger, c, earlier.logicalCallId, settledBefore));
    }
    const outcome = runCall(this.run, c);
    this.running.set(c.logicalCallId, outcome);
    return outcome;
  }
}
