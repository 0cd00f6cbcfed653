/**
 * Which ledger events become log lines, and with which fields: the call id and operation key that let an operator
 * follow one call across workers' logs. Pure, and workflow-safe: the workflow's ledger calls it on each append and
 * hands the line to the SDK's workflow logger (workflows/ledger.ts), which adds the run's own ids.
 *
 * Only ids, hashes, states and codes: never arguments, receipts' bodies or tokens.
 */
import type { LedgerEvent } from './ledger-events';
import type { Projection } from './reducer';

export interface LedgerLogLine {
  readonly msg: string;
  readonly fields: Readonly<Record<string, string | number>>;
}

const keyOf = (projection: Projection, callId: string): Record<string, string> => {
  const key = projection.calls[callId]?.operationKey;
  return key ? { callId, operationKey: key } : { callId };
};

/** A line about one call: its id and operation key, then what the event adds. */
const callLine = (
  msg: string,
  after: Projection,
  callId: string,
  fields: Record<string, string | number | undefined>,
): LedgerLogLine => ({
  msg,
  fields: {
    ...keyOf(after, callId),
    ...(Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<
      string,
      string | number
    >),
  },
});

/** The log line an event stands for, or undefined for the events no operator reads in a log. */
export function ledgerLogLine(event: LedgerEvent, after: Projection): LedgerLogLine | undefined {
  switch (event.type) {
    case 'DispatchIntentRecorded':
      return callLine('intent recorded', after, event.logicalCallId, {
        operationKey: event.intent.operationKey,
        toolName: event.intent.toolName,
        argsHash: event.intent.argumentsHash,
      });
    case 'ToolOutcomeMarkedUnknown':
      return callLine('call unknown', after, event.logicalCallId, { cause: event.cause, attempts: event.attempts });
    case 'AbsenceAwaited':
      return callLine('call awaits its in-flight window', after, event.logicalCallId, { until: event.until });
    case 'ToolEffectReconciled':
      return callLine('call reconciled', after, event.logicalCallId, { via: event.via, status: event.outcome });
    case 'ToolResultRecorded':
      return callLine('call settled', after, event.logicalCallId, {
        status: event.state,
        attempts: event.attempts,
        errorCode: event.errorCode,
      });
    case 'CompensationCompleted':
      return callLine('compensation settled', after, event.compensationCallId, {
        forwardCallId: event.forwardCallId,
        outcome: event.outcome,
      });
    case 'RunCompleted':
      return { msg: 'run stopped', fields: { stopReason: event.stopReason } };
    default:
      return undefined;
  }
}
