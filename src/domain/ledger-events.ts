/**
 * The run's domain events: the durable ledger kept in workflow state and therefore in Temporal history.
 * Every event carries the ids and versions that explain it, not only a timestamp.
 */
import type { CapabilityRecord } from './capability-record';
import type { ActorRecord } from './verified-identity';
import type { ToolIntent } from './operation-key';
import type { Budgets, LeftStanding, RetryStrategy, StopReason } from './run';

export type { LeftStanding } from './run';

/**
 * Where a call stands. The lifecycle is monotone (src/domain/lifecycle.ts): proposed → validated → deciding
 * (awaiting approval, approved, authorized) → intent recorded → in flight (dispatching, unknown) → settled
 * (succeeded, failed). A call never moves to an earlier phase: a decision taken again for a call that has
 * dispatched is recorded on it, and leaves its state where its dispatches put it.
 */
export type CallState =
  | 'PROPOSED'
  | 'VALIDATED'
  | 'AWAITING_APPROVAL'
  | 'APPROVED'
  | 'AUTHORIZED'
  | 'INTENT_RECORDED'
  | 'DISPATCHING'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'UNKNOWN';

/** Who proposed a call: the model, or the run's own saga compensating an earlier effect. */
export type CallOrigin = 'model' | 'compensation';

/** The downstream lookup (with seal) an operator's resolution was checked against. */
export interface ResolutionEvidence {
  /**
   * `found`: a record under the key; `sealed`: no effect, and the key can never commit now; `not_found`: no seal;
   * `absent`: not found, unsealed, after the downstream's declared maximum in-flight time since the last send had
   * passed (`window`), so no request can still land under the key.
   */
  readonly lookup: 'found' | 'not_found' | 'sealed' | 'absent';
  /** For `absent`: the window that proves it. */
  readonly window?: AbsenceWindow;
  /** For `found`: the record's status (`completed` holds the effect, `failed` a retained refusal, no effect). */
  readonly status?: 'completed' | 'failed';
  /** For `found` and `completed`: the receipt the downstream holds. */
  readonly receipt?: string;
  /** For `found` and `failed`: the downstream's error code. */
  readonly errorCode?: string;
  readonly service: string;
  readonly operationKey: string;
  /** Workflow time at which the lookup answered. */
  readonly checkedAt: string;
}

/** The in-flight window an `absent` lookup stands on (src/domain/recovery.ts). */
export interface AbsenceWindow {
  /** The latest time any attempt could have sent (workflow time). */
  readonly sentBy: string;
  readonly maxInFlightMs: number;
  readonly lookupLagMs: number;
}

export type LedgerEventBody =
  | {
      readonly type: 'RunCreated';
      readonly runId: string;
      readonly principalId: string;
      readonly tenant: string;
      readonly strategy: RetryStrategy;
      readonly deadlineAt: string;
      readonly budgets: Budgets;
      readonly reducerVersion: number;
      /** What a stop other than `completed` does with standing effects. */
      readonly onAbort: 'compensate' | 'leave';
      /** The verified identity (subject, issuer, token digest, roles), or why it was refused; never the token. */
      readonly identity:
        | {
            readonly verified: true;
            readonly subject: string;
            readonly issuer: string;
            readonly tokenDigest: string;
            readonly roles: readonly string[];
          }
        | { readonly verified: false; readonly code: string; readonly reason: string };
    }
  | {
      /** First event of a continued run: the projection it starts from, with the hash the previous run ended on. */
      readonly type: 'LedgerCarriedForward';
      readonly fromTemporalRunId: string;
      readonly projectionHash: string;
      readonly eventCount: number;
    }
  | { readonly type: 'ModelRequestStarted'; readonly turn: number }
  | {
      readonly type: 'ModelResponseRecorded';
      readonly turn: number;
      readonly proposals: number;
      readonly final: boolean;
      readonly attempt: number;
      /** The provider's usage figures and their price, when the model reported them. */
      readonly usage?: {
        readonly model: string;
        readonly promptTokens: number;
        readonly completionTokens: number;
        readonly costMicros: number;
      };
    }
  | {
      readonly type: 'ToolProposalRecorded';
      readonly turn: number;
      readonly logicalCallId: string;
      readonly providerCallId: string;
      readonly toolName: string;
      readonly origin: CallOrigin;
    }
  | {
      readonly type: 'ProposalRejected';
      readonly logicalCallId: string;
      readonly code: string;
      readonly message: string;
    }
  | {
      readonly type: 'ArgumentsCanonicalized';
      readonly logicalCallId: string;
      readonly toolVersion: number;
      readonly argumentsHash: string;
      readonly operationKey: string;
    }
  | {
      readonly type: 'AuthorizationAllowed' | 'AuthorizationDenied';
      readonly logicalCallId: string;
      readonly principalId: string;
      readonly tenant: string;
      readonly origin: CallOrigin;
      readonly action: string;
      readonly resource: string;
      readonly scope: string;
      readonly amountMinor?: number;
      readonly currency?: string;
      readonly argumentsHash: string;
      readonly policyVersion: string;
      readonly issuedAt: string;
      readonly expiresAt?: string;
      /** Principal, then approvers: who vouched for the call. */
      readonly chain?: readonly string[];
      readonly code?: string;
      readonly reason: string;
    }
  | {
      readonly type: 'ApprovalRequested';
      readonly logicalCallId: string;
      readonly argumentsHash: string;
      readonly policyVersion: string;
      readonly reason: string;
      /** Why an earlier approval no longer counts (expired, policy changed), when this is a renewed request. */
      readonly invalidated?: string;
    }
  | {
      readonly type: 'ApprovalGranted';
      readonly logicalCallId: string;
      readonly argumentsHash: string;
      readonly policyVersion: string;
      readonly approver: string;
      readonly expiresAt: string;
      /** The verified approver. */
      readonly actor: ActorRecord;
      /** Why the approver approved, when they said. */
      readonly reason?: string;
    }
  | {
      readonly type: 'ApprovalDenied';
      readonly logicalCallId: string;
      readonly approver: string;
      readonly reason: string;
      readonly actor: ActorRecord;
    }
  | {
      /**
       * A pending approval that will not be decided: the wait ran out (the run deadline), or the call left its
       * runner (a cancellation, the deadline too close). Nothing may approve it from now on.
       */
      readonly type: 'ApprovalWithdrawn';
      readonly logicalCallId: string;
      readonly reason: string;
    }
  | {
      /**
       * A call that has dispatched is decided again under the same key: its capability lapsed or its policy
       * changed before an attempt could send. The call stays where its dispatches left it; the decision events
       * that follow are recorded on it, and only evidence settles it.
       */
      readonly type: 'ReauthorizationStarted';
      readonly logicalCallId: string;
      readonly cause: string;
      /** Attempts of the dispatch that ended with the refusal. */
      readonly attempts: number;
    }
  | {
      readonly type: 'DispatchDeferred';
      readonly logicalCallId: string;
      readonly retryAfterMs: number;
      readonly reason: string;
    }
  | { readonly type: 'DispatchIntentRecorded'; readonly logicalCallId: string; readonly intent: ToolIntent }
  | {
      /**
       * The model proposed again an intent this run already has (the same tool and canonical arguments, so the
       * same operation key): no new intent, no dispatch; the proposal gets the earlier call's outcome.
       */
      readonly type: 'IntentRepeated';
      readonly logicalCallId: string;
      readonly sameAsCallId: string;
      readonly operationKey: string;
      readonly outcome: 'SUCCEEDED' | 'FAILED' | 'UNKNOWN';
      readonly receipt?: string;
    }
  | {
      readonly type: 'ToolAttemptStarted';
      readonly logicalCallId: string;
      /** Which dispatch of this call (1 = first); Temporal's own attempts inside it are reported with the result. */
      readonly dispatch: number;
      readonly keyUsed: string;
      /** The downstream dependency (service) the call goes to. */
      readonly service?: string;
      /** Time left before the run deadline when this dispatch began. */
      readonly deadlineRemainingMs?: number;
    }
  | {
      readonly type: 'ToolOutcomeMarkedUnknown';
      readonly logicalCallId: string;
      readonly cause: string;
      readonly attempts: number;
      /** For a timeout: which one (START_TO_CLOSE, SCHEDULE_TO_CLOSE, HEARTBEAT). */
      readonly timeoutClass?: string;
    }
  | {
      /**
       * A lookup found nothing under an unsealed key inside the downstream's in-flight window: not proof, since a
       * request still in flight could land. The call stays UNKNOWN and is looked up again at `until`.
       */
      readonly type: 'AbsenceAwaited';
      readonly logicalCallId: string;
      readonly service: string;
      readonly until: string;
      readonly window: AbsenceWindow;
    }
  | {
      readonly type: 'ToolEffectReconciled';
      readonly logicalCallId: string;
      readonly via: 'receipt_lookup' | 'same_key_replay' | 'operator' | 'compensation';
      readonly outcome: 'SUCCEEDED' | 'FAILED';
      readonly receipt?: string;
      readonly detail: string;
      /**
       * What the downstream said when asked by key (and sealed), for a lookup's settlement (`receipt_lookup`) and an
       * operator's resolution: a FAILED settlement stands only on a sealed key or a retained refusal.
       */
      readonly evidence?: ResolutionEvidence;
      /** The verified operator of an operator's resolution. */
      readonly actor?: ActorRecord;
    }
  | {
      readonly type: 'ToolResultRecorded';
      readonly logicalCallId: string;
      readonly state: 'SUCCEEDED' | 'FAILED';
      readonly attempts: number;
      readonly receipt?: string;
      readonly resultHash?: string;
      readonly errorCode?: string;
      readonly replayed: boolean;
      readonly fence?: number;
      readonly workerIdentity?: string;
      readonly queueDelayMs?: number;
      /** The capability the answering attempt sent: its digest, kid and jti (never the token). */
      readonly capability?: CapabilityRecord;
    }
  | {
      /** A dependency failed repeatedly: no dispatch to it until `until` (workflow time). */
      readonly type: 'CircuitOpened';
      readonly service: string;
      readonly reason: string;
      readonly until: string;
    }
  | {
      /** Recorded before the forward call is dispatched, so even an UNKNOWN forward effect is covered. */
      readonly type: 'CompensationRegistered';
      readonly forwardCallId: string;
      readonly compensationCallId: string;
      readonly toolName: string;
      readonly operationKey: string;
      readonly argumentsHash: string;
    }
  | {
      readonly type: 'CompensationStarted';
      readonly forwardCallId: string;
      readonly compensationCallId: string;
      readonly reason: string;
    }
  | {
      readonly type: 'CompensationCompleted';
      readonly forwardCallId: string;
      readonly compensationCallId: string;
      /** OFFSET: a new effect offset the forward one; NOTHING_TO_OFFSET: the forward effect never existed. */
      readonly outcome: 'OFFSET' | 'NOTHING_TO_OFFSET' | 'FAILED' | 'UNKNOWN';
      readonly detail: string;
    }
  | {
      /**
       * A run stopping other than `completed` with effects still standing: what it did about them (the run's
       * `onAbort` choice) and what is left for an operator.
       */
      readonly type: 'StandingEffectsSettled';
      readonly stopReason: StopReason;
      readonly choice: 'compensate' | 'leave';
      readonly offset: readonly string[];
      readonly nothingToOffset: readonly string[];
      /** Compensations that failed or whose outcome stayed UNKNOWN. */
      readonly unsettled: readonly string[];
      /** Effects left standing: no compensation exists, the choice was `leave`, or no time was left to offset. */
      readonly left: readonly string[];
    }
  | {
      /**
       * A cancel the run accepted: the verified `requestCancel` (with who and why) or Temporal's own (no identity).
       * Without `whileStopping` it stopped the turn loop, and `inFlight` lists the calls it left UNKNOWN; with it,
       * the run was already stopping (its saga or its settlement running, or its stop decided): the cancel
       * interrupted nothing, `inFlight` lists the calls dispatching or UNKNOWN as it arrived, and the stop honours it.
       */
      readonly type: 'CancellationRequested';
      readonly inFlight: readonly string[];
      readonly requestedBy?: ActorRecord;
      readonly reason?: string;
      readonly whileStopping?: true;
    }
  | { readonly type: 'OperatorWaitStarted'; readonly unknownCalls: readonly string[] }
  | {
      readonly type: 'RunCompleted';
      readonly stopReason: StopReason;
      readonly detail: string;
      /**
       * Every stop other than `completed`: the effects it leaves standing (a forward effect that holds or may hold,
       * not offset), each with why. Empty when nothing stands.
       */
      readonly leftStanding: readonly LeftStanding[];
    };

export type LedgerEventType = LedgerEventBody['type'];

/** An event as stored: the body plus its position and the workflow-task time at which it was appended. */
export type LedgerEvent = LedgerEventBody & { readonly seq: number; readonly at: string };
