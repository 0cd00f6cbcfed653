/** What starts a run and what a run ends with: shared by the client, the workflow and the CLI. */

export type RetryStrategy =
  /** A naive loop: every attempt is a new request under a fresh key. Shown only to prove the double charge. */
  | 'blind_retry'
  /** Reconcile by key (ask the downstream for the receipt) before any retry. */
  | 'check_receipt'
  /** Retry under the same key; the downstream idempotency record returns the retained result. */
  | 'same_key_replay';
export const RETRY_STRATEGIES: readonly RetryStrategy[] = ['blind_retry', 'check_receipt', 'same_key_replay'];

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

/** The embedded scripted model: canned proposals per scenario (demo, tests, fault protocol). */
export interface ScriptedPlannerConfig {
  readonly kind: 'scripted';
  /** A scenario the worker's scripted model knows, e.g. `wallet-debit`. */
  readonly scenario: string;
  /** Values the scenario's canned proposals use. */
  readonly vars?: Readonly<Record<string, unknown>>;
}

/**
 * A real model behind an OpenAI-compatible Chat Completions API. Only the model's settings travel in workflow
 * input and history: the API key and base URL are the worker's (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
 */
export interface OpenAIPlannerConfig {
  readonly kind: 'openai';
  /** The model name, e.g. `gpt-4o-mini`; empty means the worker's `LEDGERLOOP_OPENAI_MODEL`. */
  readonly model: string;
  readonly temperature?: number;
  /** Upper bound on the tokens the model may generate per turn (`max_completion_tokens`). */
  readonly maxOutputTokens?: number;
  /** Replaces the default planner role; the rule that tool results are untrusted data is always appended. */
  readonly systemPrompt?: string;
}

export type PlannerConfig = ScriptedPlannerConfig | OpenAIPlannerConfig;

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
}

export interface Budgets {
  readonly maxTurns: number;
  readonly maxToolCalls: number;
}

export interface AgentRunInput {
  readonly principal: Principal;
  readonly goal: string;
  readonly strategy: RetryStrategy;
  readonly planner: PlannerConfig;
  /** The one absolute run deadline, ISO 8601 with zone. */
  readonly deadlineAt: string;
  readonly limits?: Partial<AttemptLimits>;
  readonly caps?: Partial<TimeoutCaps>;
  readonly budgets?: Partial<Budgets>;
}

export const DEFAULT_LIMITS: AttemptLimits = { model: 3, tool: 3, reconcile: 5, compensation: 5 };
export const DEFAULT_CAPS: TimeoutCaps = {
  modelAttemptMs: 30_000,
  toolAttemptMs: 10_000,
  reconcileAttemptMs: 5_000,
  recoveryReserveMs: 2_000,
};
export const DEFAULT_BUDGETS: Budgets = { maxTurns: 8, maxToolCalls: 16 };

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
  readonly finalText?: string;
  readonly projectionHash: string;
  readonly eventCount: number;
  readonly calls: readonly CallSummary[];
}
