/** Inputs and outputs of the activities, shared by workflow code (as types) and activity code. */
import type { VerifiedIdentity } from './verified-identity';
import type { DispatchAuthorization, HeldPolicy } from './authorization';
import type { CapabilityRecord } from './capability-record';
import type { Json } from './canonical';
import type { ToolIntent } from './operation-key';
import type { PlannerConfig, RetryStrategy } from './run';
import type { IdempotencyContract } from './tool';

/**
 * A tool outcome as the next planning step sees it: parsed, promoted fields only, in a data channel of its own.
 * `data` is untrusted: it came from a downstream system and is never concatenated into instructions.
 */
export interface Observation {
  readonly logicalCallId: string;
  readonly providerCallId: string;
  readonly toolName: string;
  readonly state: 'SUCCEEDED' | 'FAILED' | 'UNKNOWN';
  readonly data?: Json;
  readonly error?: { readonly code: string; readonly message: string };
}

export interface PlanRequest {
  readonly runId: string;
  readonly turn: number;
  readonly goal: string;
  readonly planner: PlannerConfig;
  readonly observations: readonly Observation[];
}

/**
 * A new run's opening, carried by its first planning request: the planner activity verifies the token, and that it
 * names `principal`, before it calls the model, so the run's identity check costs no activity of its own. A refusal
 * is the identity activity's typed failure (`Identity.*`, not retried), and the model is never called.
 */
export interface RunOpening {
  readonly token: string;
  readonly principal: { readonly id: string; readonly tenant: string };
}

/** What an opening verified: who the token names (never the token) and the policy to hold, when it was readable. */
export interface OpenedIdentity {
  readonly identity: VerifiedIdentity;
  readonly policy?: HeldPolicy;
}

/** The planner activity's request: a planning turn, and for a new run's first turn its opening. */
export type PlanTurnRequest = PlanRequest & { readonly opening?: RunOpening };

/** The planner activity's response: the model's, and what the opening verified when it carried one. */
export type PlanTurnResponse = PlanResponse & { readonly opening?: OpenedIdentity };

export interface ProposedCall {
  readonly providerCallId: string;
  readonly name: string;
  /** The raw argument text the model produced: parsed and validated by the workflow, never trusted. */
  readonly argumentsJson: string;
}

/** Tokens one planning call used, as the provider reported them. The scripted model reports none. */
export interface PlanUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** The model that actually answered (the provider's name for it). */
  readonly model: string;
}

export type PlanResponse =
  | {
      readonly kind: 'proposals';
      readonly proposals: readonly ProposedCall[];
      readonly attempt: number;
      readonly usage?: PlanUsage;
    }
  | { readonly kind: 'final'; readonly text: string; readonly attempt: number; readonly usage?: PlanUsage };

export interface DispatchRequest {
  readonly intent: ToolIntent;
  readonly service: string;
  /** The tool's target (`targetOf`: a Ledgerloop route, `METHOD path`, `function:<tool>`), re-checked by the signer. */
  readonly route: string;
  /** The canonical arguments: exactly what was hashed into `intent.argumentsHash`. */
  readonly body: Json;
  readonly strategy: RetryStrategy;
  /** Which workflow-level dispatch of this call this is (1 = first). */
  readonly dispatch: number;
  /** The key to send: the operation key (a strategy the lab installs derives others from it). */
  readonly keyUsed: string;
  /**
   * The workflow's decision from the policy it holds, which this activity signs at the instant of dispatch, and
   * only while the current policy still has the decision's digest.
   */
  readonly authorization: DispatchAuthorization;
  /**
   * When the intent was first recorded (workflow time), which the first send follows in the same workflow task: a
   * same-key resend after the key's retention, counted from here, is refused (src/domain/recovery.ts).
   */
  readonly intentRecordedAt: string;
  /** The tool's idempotency contract: `none` is never sent twice. */
  readonly idempotency: IdempotencyContract;
}

export interface DispatchResponse {
  readonly outcome: 'succeeded' | 'rejected';
  readonly httpStatus: number;
  /** The downstream's response body: untrusted until the workflow validates it against the tool's schema. */
  readonly body: unknown;
  readonly receipt?: string;
  /** The downstream answered from its idempotency record instead of committing a new effect. */
  readonly replayed: boolean;
  /** Temporal's attempt number for this dispatch activity. */
  readonly attempt: number;
  readonly fence: number;
  /** The idempotency key this attempt actually sent. */
  readonly keyUsed: string;
  /** Set when an earlier attempt's outcome was unknown and this attempt settled it. */
  readonly recoveredVia?: 'receipt_lookup' | 'same_key_replay';
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly workerIdentity: string;
  /** Schedule-to-start delay of the attempt that answered, in ms. */
  readonly queueDelayMs?: number;
  /** The capability this attempt sent, as it may be recorded: its SHA-256, kid and jti, never the token. */
  readonly capability?: CapabilityRecord;
}

export interface ReconcileRequest {
  readonly intent: ToolIntent;
  readonly service: string;
  /** Seal a missing key, so a late request can no longer commit after we concluded "no effect". */
  readonly seal: boolean;
  /** The canonical arguments, for a lookup request that names a field of them (an HTTP API's search). */
  readonly body?: Json;
  /**
   * A missing key the downstream would not seal is a retryable failure (`Reconcile.SealRefused`), so the seal is
   * tried again within the activity's attempts; without it, the answer says `sealed: false`.
   */
  readonly retrySeal?: boolean;
}

export type ReconcileResponse =
  | {
      readonly kind: 'found';
      readonly status: 'completed' | 'failed';
      readonly receipt?: string;
      readonly result?: unknown;
      readonly errorCode?: string;
    }
  | { readonly kind: 'not_found'; readonly sealed: boolean };
