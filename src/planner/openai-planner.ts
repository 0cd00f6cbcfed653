/**
 * The real-model planner: one Chat Completions request per Temporal attempt of `planTurn`.
 *
 * - Temporal is the only retry owner: the client runs with `maxRetries: 0`, every provider error goes through
 *   `classifyProviderError`, and the verdict becomes a typed ApplicationFailure (`Planner.ProviderRetryable` with
 *   the provider's retry-after as `nextRetryDelay`, or a non-retryable `Planner.ProviderRejected`).
 * - The request carries the activity's cancellation signal and a timeout just under its start-to-close timeout,
 *   so the attempt fails as a classified error before Temporal times it out and no zombie request outlives it.
 * - The model only proposes: tool calls are returned as raw argument text for the workflow to validate.
 * - The transcript lives in a `TranscriptStore`, by reference; history carries only the latest observations.
 */
import OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { PlanRequest, PlanResponse, PlanUsage } from '../domain/activity-contracts';
import { Failure } from '../domain/failures';
import type { OpenAIPlannerConfig } from '../domain/run';
import type { ToolRegistry } from '../tools/registry';
import { assertContiguous, buildMessages, toolResultsFor, TranscriptMissingError } from './conversation';
import { classifyProviderError, type ProviderVerdict } from './provider-errors';
import { chatCompletionTools } from './tool-schemas';
import type { AssistantTurn, TranscriptStore, TranscriptToolCall } from '../stores/transcript-store';

/** What the planner needs from the current activity attempt. */
export interface AttemptContext {
  readonly attempt: number;
  /** When this activity was first scheduled: orders transcript writes across workflow resets. */
  readonly scheduledTimestampMs: number;
  readonly startToCloseTimeoutMs: number;
  readonly cancellationSignal: AbortSignal;
}

export interface OpenAIPlannerDeps {
  /** Built once per worker, with `maxRetries: 0`. */
  readonly client: OpenAI;
  readonly transcriptStore: TranscriptStore;
  /** Used when a run's `planner.model` is empty (`LEDGERLOOP_OPENAI_MODEL`). */
  readonly defaultModel?: string;
  /** The tools offered to the model; the built-in registry by default. */
  readonly tools?: ToolRegistry;
}

export type OpenAIPlanRequest = PlanRequest & { readonly planner: OpenAIPlannerConfig };

/** An OpenAI client for Temporal activities: no SDK retries, the key and URL from the worker only. */
export function createOpenAIClient(opts: { apiKey?: string; baseURL?: string }): OpenAI {
  // A local OpenAI-compatible server may need no key, but the SDK insists on one.
  return new OpenAI({
    apiKey: opts.apiKey || 'no-key',
    ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
    maxRetries: 0,
  });
}

/** The per-request timeout: the attempt's start-to-close minus a margin of 10 % (at least 100 ms, at most 1 s). */
export function requestTimeoutMs(startToCloseMs: number): number {
  const margin = Math.min(1_000, Math.max(100, Math.floor(startToCloseMs * 0.1)));
  return Math.max(100, startToCloseMs - margin);
}

/** The ApplicationFailure the activity throws for a provider verdict. */
export function providerFailure(v: ProviderVerdict): ApplicationFailure {
  return ApplicationFailure.create({
    type: v.retryable ? Failure.PlannerProviderRetryable : Failure.PlannerProviderRejected,
    nonRetryable: !v.retryable,
    message: v.message,
    details: [{ reason: v.reason, ...(v.status !== undefined ? { status: v.status } : {}) }],
    ...(v.retryable && v.nextRetryDelayMs !== undefined ? { nextRetryDelay: v.nextRetryDelayMs } : {}),
  });
}

function toolCallsOf(message: Choice['message']): TranscriptToolCall[] {
  return (message.tool_calls ?? []).map((tc) =>
    tc.type === 'function'
      ? { id: tc.id, name: tc.function.name, arguments: tc.function.arguments }
      : { id: tc.id, name: tc.custom.name, arguments: tc.custom.input },
  );
}

function usageOf(completion: ChatCompletion): PlanUsage | undefined {
  if (!completion.usage) return undefined;
  return {
    promptTokens: completion.usage.prompt_tokens,
    completionTokens: completion.usage.completion_tokens,
    model: completion.model,
  };
}

/** The run's model, else the worker's default; neither is a non-retryable `Planner.Malformed`. */
function modelOf(req: OpenAIPlanRequest, defaultModel: string | undefined): string {
  const model = req.planner.model || defaultModel;
  if (model) return model;
  throw ApplicationFailure.create({
    type: Failure.PlannerMalformed,
    nonRetryable: true,
    message: 'planner.model is empty and the worker has no LEDGERLOOP_OPENAI_MODEL default',
  });
}

/** Loads the transcript; a missing turn is a non-retryable `Planner.TranscriptMissing`, anything else is thrown. */
async function transcriptOrFailure<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!(err instanceof TranscriptMissingError)) throw err;
    throw ApplicationFailure.create({
      type: Failure.PlannerTranscriptMissing,
      nonRetryable: true,
      message: err.message,
    });
  }
}

type Choice = ChatCompletion['choices'][number];

/** The completion's first choice; none is a retryable provider failure. */
function firstChoice(completion: ChatCompletion): Choice {
  const choice = completion.choices?.[0];
  if (choice !== undefined) return choice;
  throw ApplicationFailure.create({
    type: Failure.PlannerProviderRetryable,
    message: `model provider returned no choices (completion ${completion.id})`,
  });
}

/** The reply's tool calls, each with its own id: a missing or repeated id could not be correlated, so it refuses. */
function correlatedToolCalls(message: Choice['message']): TranscriptToolCall[] {
  const toolCalls = toolCallsOf(message);
  const ids = toolCalls.map((c) => c.id);
  if (ids.some((id) => typeof id !== 'string' || id === '') || new Set(ids).size !== ids.length) {
    throw ApplicationFailure.create({
      type: Failure.PlannerMalformed,
      nonRetryable: true,
      message: `model reply has missing or duplicate tool call ids (${ids.join(', ')}): results could not be correlated`,
    });
  }
  return toolCalls;
}

/**
 * The turn's answer: its tool calls as proposals, or a final text. Only a reply the model finished is a final
 * answer; a cut-off or refused one ends the run as model_failed. The refusal text is the model's (untrusted): it
 * stays in the transcript, out of the run's detail.
 */
function responseOf(
  choice: Choice,
  toolCalls: readonly TranscriptToolCall[],
  extra: Pick<PlanResponse, 'attempt' | 'usage'>,
): PlanResponse {
  if (toolCalls.length > 0) {
    return {
      kind: 'proposals',
      proposals: toolCalls.map((c) => ({ providerCallId: c.id, name: c.name, argumentsJson: c.arguments })),
      ...extra,
    };
  }
  if (choice.finish_reason === 'length') {
    throw ApplicationFailure.create({
      type: Failure.PlannerTruncated,
      nonRetryable: true,
      message: 'the model reply was cut off at the output limit (finish_reason length) before any tool call or answer',
    });
  }
  if ((choice.message.refusal ?? '') !== '' || choice.finish_reason === 'content_filter') {
    throw ApplicationFailure.create({
      type: Failure.PlannerRefused,
      nonRetryable: true,
      message: `the model refused (finish_reason ${choice.finish_reason}); its text is in the run's transcript`,
    });
  }
  return { kind: 'final', text: choice.message.content ?? '', ...extra };
}

/** The planner for `planner.kind === 'openai'`. */
export function createOpenAIPlanner(deps: OpenAIPlannerDeps) {
  const tools = chatCompletionTools(deps.tools);
  const store = deps.transcriptStore;
  const secrets = typeof deps.client.apiKey === 'string' ? [deps.client.apiKey] : [];

  async function messagesFor(req: OpenAIPlanRequest) {
    const turns = await store.loadTurns(req.runId, req.turn);
    assertContiguous(req.runId, turns, req.turn);
    const previous = turns[req.turn - 2];
    if (previous !== undefined) {
      // The observations of turn N-1 arrive with turn N: they become that turn's tool results.
      const results = toolResultsFor(req.runId, previous, req.observations);
      await store.saveToolResults(req.runId, previous.turn, results);
      turns[req.turn - 2] = { ...previous, toolResults: new Map(results.map((r) => [r.providerCallId, r.content])) };
    }
    return buildMessages(req.runId, req.goal, req.planner, turns);
  }

  async function complete(body: ChatCompletionCreateParamsNonStreaming, at: AttemptContext): Promise<ChatCompletion> {
    try {
      return await deps.client.chat.completions.create(body, {
        signal: at.cancellationSignal,
        timeout: requestTimeoutMs(at.startToCloseTimeoutMs),
        maxRetries: 0,
      });
    } catch (err) {
      throw providerFailure(classifyProviderError(err, { secrets }));
    }
  }

  async function plan(req: OpenAIPlanRequest, at: AttemptContext): Promise<PlanResponse> {
    const model = modelOf(req, deps.defaultModel);
    const messages = await transcriptOrFailure(() => messagesFor(req));
    const completion = await complete(
      {
        model,
        messages,
        tools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
        ...(req.planner.temperature !== undefined ? { temperature: req.planner.temperature } : {}),
        ...(req.planner.maxOutputTokens !== undefined ? { max_completion_tokens: req.planner.maxOutputTokens } : {}),
      },
      at,
    );
    const choice = firstChoice(completion);
    const toolCalls = correlatedToolCalls(choice.message);
    const assistant: AssistantTurn = { content: choice.message.content ?? null, toolCalls };
    await store.saveAssistantTurn(req.runId, req.turn, assistant, {
      scheduledMs: at.scheduledTimestampMs,
      attempt: at.attempt,
    });
    const usage = usageOf(completion);
    return responseOf(choice, toolCalls, { attempt: at.attempt, ...(usage ? { usage } : {}) });
  }

  return { plan };
}

export type OpenAIPlanner = ReturnType<typeof createOpenAIPlanner>;
