/** What starts a run and what a run ends with: shared by the client, the workflow and the CLI. */

import type { RetryStrategy } from './strategy-names';

export type { RetryStrategy } from './strategy-names';

export type StopReason =
  | 'completed'
  | 'budget_exhausted'
  | 'deadline_exceeded'
  | 'tool_failed'
  | 'authorization_denied'
  | 'outcome_unknown'
  | 'operator_stopped'
  | 'model_failed'
  | 'compensation_failed';

export interface Principal {
  /** e.g. `user:alice`. */
  readonly id: string;
  readonly tenant: string;
}

/**
 * A real model behind an OpenAI-compatible Chat Completions API. Only the model's settings travel in workflow
 * input and history: the API key and base URL are the worker's (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
 */
export type OpenAIPlannerConfig = {
  readonly kind: 'openai';
  /** The model name, e.g. `gpt-4o-mini`; empty means the worker's `LEDGERLOOP_OPENAI_MODEL`. */
  readonly model: string;
  readonly temperature?: number;
  /** Upper bound on the tokens the model may generate per turn (`max_completion_tokens`). */
  readonly maxOutputTokens?: number;
  /** Replaces the default planner role; the rule that tool results are untrusted data is always appended. */
  readonly systemPrompt?: string;
};

/**
 * Which model plans the run (`kind`: one of the worker's `ModelProvider`s) and that model's own settings, which
 * only the model reads and checks (a bad one is `Planner.ConfigInvalid`): e.g. `OpenAIPlannerConfig`, or the
 * scripted model's scenario (src/planner/scripted-model.ts).
 */
export interface PlannerConfig {
  readonly kind: string;
  readonly [setting: string]: unknown;
}

export interface AttemptLimits {
  readonly model: number;
  readonly tool: number;
  readonly reconcile: number;
  readonly compensation: number;
}

/** Per-attempt caps; each attempt's real timeout is min(cap, deadline - now - recoveryReserve). */
export interface TimeoutCaps {
  readonly modelAttemptMs: number;
  readonly toolAttemptMs: number;
  readonly reconcileAttemptMs: number;
  /** Time kept back from every attempt so reconciliation can still run before the deadline. */
  readonly recoveryReserveMs: number;
  /**
   * How long past the deadline a stopping run may still offset its standing effects (`onAbort: 'compensate'`):
   * compensation is what a stop after the deadline most needs time for. The run closes by deadline + grace.
   */
  readonly abortGraceMs: number;
}

export interface Budgets {
  readonly maxTurns: number;
  readonly maxToolCalls: number;
  /** Prompt plus completion tokens, from the provider's usage figures. Default: unbounded. */
  readonly maxTokens?: number;
  /** Spend in micro-units of the price table's currency (USD by default). Default: unbounded. */
  readonly maxCostMicros?: number;
  /** Continue as new once this run's own history passes this many events (the server suggests 4,096). */
  readonly maxHistoryEvents: number;
  /** Stop when the model proposes the same calls (tool and canonical arguments) this many turns in a row. */
  readonly noProgressTurns: number;
  /** Proposals one turn may make; the ones past it are rejected (`Budget.ProposalsPerTurn`), none dispatched. */
  readonly maxProposalsPerTurn: number;
}

/** Price per million tokens, in micro-units (1 USD = 1,000,000). */
export interface ModelPrice {
  readonly promptPerMTokMicros: number;
  readonly completionPerMTokMicros: number;
}

export interface AgentRunInput {
  /** Who the run acts for; must equal what the verified identity token names (else `authorization_denied`). */
  readonly principal: Principal;
  /**
   * The principal's identity token (compact Ed25519 JWS from a configured issuer). Verified before the first model
   * call; the ledger records only its subject and SHA-256 digest. It travels in the workflow input (encrypted by
   * the payload codec) and is dropped at continue-as-new.
   */
  readonly identityToken?: string;
  readonly goal: string;
  readonly strategy: RetryStrategy;
  readonly planner: PlannerConfig;
  /** The one absolute run deadline, ISO 8601 with zone. */
  readonly deadlineAt: string;
  readonly limits?: Partial<AttemptLimits>;
  readonly caps?: Partial<TimeoutCaps>;
  readonly budgets?: Partial<Budgets>;
  /**
   * What a dispatched call that fails downstream does to the run: `compensate_and_stop` (default) offsets the
   * effects that took place and stops with tool_failed; `report_to_model` hands the failure to the model.
   */
  readonly onToolFailure?: 'compensate_and_stop' | 'report_to_model';
  /**
   * What a run that stops other than `completed` does with the effects still standing: `compensate` (default)
   * offsets each one that has a compensation; `leave` leaves them for an operator. Either way the choice and
   * every standing effect are recorded in the ledger and named in the stop detail.
   */
  readonly onAbort?: 'compensate' | 'leave';
  /** A turn whose every proposal was denied (policy, tenant, approval): tell the model (default) or stop. */
  readonly onDenied?: 'report_to_model' | 'stop';
  /** Prices per model for the cost budget; default DEFAULT_PRICES. A model missing here costs nothing counted. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** What a continued run carries over from the run before it (set by the workflow, not by callers). */
  readonly carried?: CarriedState;
}

/** The state continue-as-new carries forward: the projection and open work, never the whole transcript. */
export interface CarriedState {
  readonly fromTemporalRunId: string;
  readonly projection: unknown;
  readonly projectionHash: string;
  readonly eventCount: number;
  readonly nextTurn: number;
  readonly observations: readonly unknown[];
  readonly lastProposalSignature?: string;
  readonly repeatedTurns: number;
  readonly usage: { readonly tokens: number; readonly costMicros: number };
  /** Compensations registered before their forward calls were dispatched: still owed after continue-as-new. */
  readonly saga?: readonly SagaRegistrationState[];
  /** The identity the first run verified at its opening (issuer and subject): an approver is never it. */
  readonly identity?: { readonly issuer: string; readonly subject: string };
}

/** One carried saga registration (see workflows/steps/compensate.ts). */
export interface SagaRegistrationState {
  readonly forwardCallId: string;
  readonly forwardToolName: string;
  readonly compensationToolName: string;
  readonly args: unknown;
}

export const DEFAULT_LIMITS: AttemptLimits = { model: 3, tool: 3, reconcile: 5, compensation: 5 };
export const DEFAULT_CAPS: TimeoutCaps = {
  modelAttemptMs: 30_000,
  toolAttemptMs: 10_000,
  reconcileAttemptMs: 5_000,
  recoveryReserveMs: 2_000,
  abortGraceMs: 15_000,
};
export const DEFAULT_BUDGETS: Budgets = {
  maxTurns: 8,
  maxToolCalls: 16,
  maxHistoryEvents: 2_000,
  noProgressTurns: 2,
  maxProposalsPerTurn: 8,
};

/**
 * Illustrative list prices (micro-USD per million tokens); configure your own in `AgentRunInput.prices`.
 * A budget is only as right as its price table.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o-mini': { promptPerMTokMicros: 150_000, completionPerMTokMicros: 600_000 },
  'gpt-4o': { promptPerMTokMicros: 2_500_000, completionPerMTokMicros: 10_000_000 },
};

/** An effect a stopped run leaves for an operator: it holds or may hold, and was not offset. */
export interface LeftStanding {
  readonly logicalCallId: string;
  readonly toolName: string;
  readonly operationKey: string;
  /** The call's state when the run stopped: SUCCEEDED (the effect holds) or UNKNOWN (it may). */
  readonly state: 'SUCCEEDED' | 'UNKNOWN';
  /**
   * Why it stands: `no_compensation` (the tool declares none, or it is irreversible), `left_by_choice`
   * (`onAbort: 'leave'`), `compensation_unsettled` (the compensation failed or its outcome is UNKNOWN),
   * `no_time` (the deadline and its grace left no room to offset it), `compensation_lost` (continue-as-new
   * carried a compensation this worker's tools no longer know), or `outcome_unknown` (nobody knows yet whether
   * the effect exists, and nothing offset it).
   */
  readonly why:
    | 'no_compensation'
    | 'left_by_choice'
    | 'compensation_unsettled'
    | 'no_time'
    | 'compensation_lost'
    | 'outcome_unknown';
}

export interface CallSummary {
  readonly logicalCallId: string;
  readonly toolName: string;
  readonly state: string;
  readonly operationKey?: string;
  readonly receipt?: string;
}

export interface AgentRunResult {
  readonly stopReason: StopReason;
  readonly detail: string;
  /** What the stop left standing for an operator (empty for `completed`). */
  readonly leftStanding: readonly LeftStanding[];
  readonly finalText?: string;
  readonly projectionHash: string;
  readonly eventCount: number;
  readonly calls: readonly CallSummary[];
}
