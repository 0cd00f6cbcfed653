/**
 * Application-owned identities. A provider call id correlates one proposal with its result inside the model's
 * message protocol; it is never a business identity. The operation key names one business intent and stays the
 * same across activity retries, worker restarts, workflow replay and a regenerated model turn.
 */
import { hashCanonical } from './canonical';

/** The essay's ToolIntent: everything that explains one dispatch, recorded before it happens. */
export interface ToolIntent {
  /** The business run id (the Temporal workflow id), stable across Temporal runs of the same workflow. */
  readonly runId: string;
  readonly providerCallId: string;
  readonly logicalCallId: string;
  readonly operationKey: string;
  readonly toolName: string;
  readonly toolVersion: number;
  readonly argumentsHash: string;
  readonly principalId: string;
  readonly tenant: string;
  readonly policyVersion: string;
  readonly deadlineAt: string;
}

export const OPERATION_KEY_VERSION = 2;

/**
 * What names one business intent: the same tenant, run, tool and canonical arguments are the same intent for the
 * life of the run. A tool whose users mean to repeat an identical effect names a distinguishing argument
 * (`intentReference`), so the model varies it.
 */
export interface OperationKeyInput {
  readonly tenant: string;
  readonly runId: string;
  readonly toolName: string;
  readonly toolVersion: number;
  readonly argumentsHash: string;
}

/** `op_` + 40 hex of SHA-256 over the canonical key input. Contains no secret and no provider id. */
export function deriveOperationKey(input: OperationKeyInput): string {
  return `op_${hashCanonical({ v: OPERATION_KEY_VERSION, ...input }).slice(0, 40)}`;
}

/**
 * The logical call id names one proposed step of the workflow: the turn plus the intent it proposes, never the
 * position of the call in the model's array nor the provider's id.
 */
export function deriveLogicalCallId(input: {
  readonly runId: string;
  readonly turn: number;
  readonly toolName: string;
  readonly argumentsHash: string;
  readonly occurrenceInTurn: number;
}): string {
  return `lc_${input.turn}_${hashCanonical(input).slice(0, 12)}`;
}
