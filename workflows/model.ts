/**
 * The run model: what every step of a run reads and changes, in one place. `AgentRun` (run.ts) is the one object
 * that holds it; each step takes it as its first argument. Types only, and the small value types every step
 * shares (a validated call, a decision's result), so no step imports another's module for a type.
 */
import type { Observation } from '../src/domain/activity-contracts';
import type { DeadlineClock } from '../src/domain/activity-presets';
import type { Json } from '../src/domain/canonical';
import type { ToolIntent } from '../src/domain/operation-key';
import type { CallOrigin } from '../src/domain/ledger-events';
import type { AgentRunInput, RetryStrategy } from '../src/domain/run';
import type { AnyTool } from '../src/domain/tool';
import type { ApprovalGrant, DispatchAuthorization } from '../src/domain/authorization';
import type { ToolRegistry } from '../src/tools/registry';
import type { Approvals } from './approvals';
import type { CircuitBreakers } from './circuit-breaker';
import type { Ledger } from './ledger';
import type { PolicyHolder } from './policy-holder';

/** Who a run acts for. */
export interface Who {
  readonly principalId: string;
  readonly tenant: string;
}

export interface RunModel {
  /** The business run id: the workflow id, the same across continue-as-new. */
  readonly runId: string;
  readonly input: AgentRunInput;
  readonly who: Who;
  readonly deadlineAt: string;
  readonly strategy: RetryStrategy;
  readonly tools: ToolRegistry;
  readonly ledger: Ledger;
  readonly approvals: Approvals;
  /** The policy the run decides from, held from its opening. */
  readonly policy: PolicyHolder;
  readonly breakers: CircuitBreakers;
  /** The run's clock: its one deadline, the time now, the caps and attempt limits. */
  clock(): DeadlineClock;
  /**
   * Reserve one intent of the run's tool-call budget for a call (true), or refuse (false). Taken before any
   * await, so parallel proposals cannot all pass a check made before their awaits; it becomes the intent when
   * the intent is recorded, or is released.
   */
  reserveIntent(callId: string): boolean;
  releaseIntent(callId: string): void;
  /** Declare how a call's effect would be offset, before its first dispatch (saga registration). */
  registerCompensation(call: ValidatedCall): void;
}

/** A proposal that passed validation and was keyed: what `decide` decides on. */
export interface ValidatedCall {
  readonly tool: AnyTool;
  readonly args: unknown;
  readonly body: Json;
  readonly logicalCallId: string;
  readonly providerCallId: string;
  readonly operationKey: string;
  readonly argumentsHash: string;
  readonly origin: CallOrigin;
}

/** A validated call with its recorded intent: what `dispatch` sends. */
export type ReadyCall = ValidatedCall & { readonly intent: ToolIntent };

/** What an observation names of its call. */
export type CallBase = Omit<Observation, 'state'>;

export function callBase(call: ValidatedCall): CallBase {
  return { logicalCallId: call.logicalCallId, providerCallId: call.providerCallId, toolName: call.tool.name };
}

/** An allowed decision, its intent recorded: what the dispatch activity signs and sends under. */
export interface Allowed {
  readonly ok: true;
  readonly intent: ToolIntent;
  /** When the call's intent was first recorded (workflow time): the downstream's retention counts from it. */
  readonly intentRecordedAt: string;
  /** The decision, for the dispatch activity to sign at the instant of sending. */
  readonly authorization: DispatchAuthorization;
  /** The approval the decision rests on, if any: a new decision for the same call presents it again. */
  readonly approval?: ApprovalGrant;
}

/** A refusal: the observation the model gets back. */
export interface Refused {
  readonly ok: false;
  readonly observation: Observation;
}

export type Decision = Allowed | Refused;
