/** Queries and updates of the agent-run workflow: imported by workflow code and by clients. */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { LedgerSnapshot } from './ledger';

/** The ledger: events, projection and projection hash. With an argument n, the projection of the first n events. */
export const ledgerQuery = defineQuery<LedgerSnapshot, [number?]>('ledger');

export interface OperatorResolution {
  readonly logicalCallId: string;
  readonly outcome: 'SUCCEEDED' | 'FAILED';
  /** Who decided, e.g. `ops:bob`; recorded in the ledger. */
  readonly operator: string;
  /** Why: the evidence the operator used (a statement, a receipt found by hand). */
  readonly reason: string;
  readonly receipt?: string;
}

/** An operator settles a call that reconciliation left UNKNOWN. Refused for a call that is not UNKNOWN. */
export const resolveCallUpdate = defineUpdate<{ readonly accepted: true }, [OperatorResolution]>('resolveCall');
