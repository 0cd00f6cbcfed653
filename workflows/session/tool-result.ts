/**
 * What a governed call hands back to the agent loop that asked for it: always a result it can read, never a throw.
 * The loop (the AI SDK's `generateText`, an Agents `Runner`) goes on, and what the downstream answered stays data.
 */
import type { Observation } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';

export type GovernedResult =
  /** The effect took place (or a lookup found it): the downstream's promoted output, untrusted data. */
  | { readonly status: 'ok'; readonly callId: string; readonly result: unknown }
  /** Policy, authorization, a budget, the deadline or the downstream refused: nothing happened. */
  | { readonly status: 'refused'; readonly callId: string; readonly code: string; readonly reason: string }
  /**
   * The call needs a person's approval and none came before the run's deadline: the request was withdrawn and
   * nothing happened. Before the deadline the call waits for the approval durably and answers `ok` or `refused`.
   */
  | { readonly status: 'approval_pending'; readonly callId: string; readonly reason: string }
  /**
   * Reconciliation could not settle the call: the effect may have happened. The run's stop names it, and an
   * operator settles it by its key.
   */
  | { readonly status: 'unknown'; readonly callId: string; readonly operationKey: string; readonly reason: string };

/** The result the loop reads for a call's observation (`operationKey`: the call's, for an UNKNOWN). */
export function governedResult(o: Observation, operationKey: string): GovernedResult {
  const callId = o.logicalCallId;
  const code = o.error?.code ?? 'Tool.Failed';
  const reason = o.error?.message ?? code;
  switch (o.state) {
    case 'SUCCEEDED':
      return { status: 'ok', callId, result: o.data ?? null };
    case 'UNKNOWN':
      return { status: 'unknown', callId, operationKey, reason };
    default:
      if (code === Failure.ApprovalTimedOut) return { status: 'approval_pending', callId, reason };
      return { status: 'refused', callId, code, reason };
  }
}
