/**
 * The activity side of the OpenAI Agents SDK's workflow-safe model (`ActivityModel`,
 * workflows/openai-agents/activity-model.ts): the worker holds the real `ModelProvider` (`OpenAIProvider` from
 * `@openai/agents-openai`, its client built with `maxRetries: 0`, or a scripted one in tests) and answers one
 * model request per activity. Only JSON crosses: the request without its signal (the activity's cancellation
 * signal takes its place), the response with its usage as plain data.
 *
 * One retry owner: Temporal. A refusal the provider will give again (an HTTP 4xx other than 408, 409 and 429: a
 * bad request, a wrong key, an unknown model) is a non-retryable `AgentsModel.Refused`, so no attempt is spent
 * repeating it; anything else (a timeout, a 5xx, a lost connection) is left to the activity's retry policy.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelProvider, ModelRequest, ModelResponse } from '@openai/agents-core';

/** One model request as it crosses into the activity. */
export interface AgentsModelCall {
  /** The model name the agent asked for (`Agent.model`), given to the worker's provider. */
  readonly modelName?: string;
  readonly request: Omit<ModelRequest, 'signal'>;
}

/** A model response as it crosses back: the usage as plain data (`Usage.fromJSON` rebuilds it). */
export type AgentsModelAnswer = Omit<ModelResponse, 'usage'> & { readonly usage: Record<string, unknown> };

/** The failure type of a provider refusal that repeating cannot change. */
export const AGENTS_MODEL_REFUSED = 'AgentsModel.Refused';

const RETRYABLE_4XX = new Set([408, 409, 429]);

function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The activities a worker registers for `ActivityModelProvider` (the plugin does it). */
export function createAgentsModelActivities(provider: ModelProvider) {
  return {
    async invokeAgentsModel(call: AgentsModelCall): Promise<AgentsModelAnswer> {
      let response: ModelResponse;
      try {
        const model = await provider.getModel(call.modelName);
        response = await model.getResponse({ ...call.request, signal: Context.current().cancellationSignal });
      } catch (error) {
        const status = httpStatus(error);
        if (status !== undefined && status >= 400 && status < 500 && !RETRYABLE_4XX.has(status))
          throw ApplicationFailure.create({
            message: `the model provider refused the request (HTTP ${status})`,
            type: AGENTS_MODEL_REFUSED,
            nonRetryable: true,
            details: [{ status }],
          });
        throw error;
      }
      return { ...response, usage: JSON.parse(JSON.stringify(response.usage)) as Record<string, unknown> };
    },
  };
}

export type AgentsModelActivities = ReturnType<typeof createAgentsModelActivities>;
