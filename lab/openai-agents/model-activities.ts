/**
 * The activity side of `ActivityModel` (workflows/activity-model.ts): the worker holds the real `ModelProvider`
 * (`OpenAIProvider` from `@openai/agents-openai` with its client's retries off, or a scripted one in tests) and
 * answers one model request per activity. Only JSON crosses: the request without its signal, the response with
 * its usage as plain data.
 */
import { Context } from '@temporalio/activity';
import type { ModelProvider, ModelRequest, ModelResponse } from '@openai/agents-core';

export interface AgentsModelCall {
  readonly modelName?: string;
  readonly request: Omit<ModelRequest, 'signal'>;
}

/** A model response as it crosses the activity boundary: the usage as plain data. */
export type AgentsModelAnswer = Omit<ModelResponse, 'usage'> & { readonly usage: Record<string, unknown> };

export function createAgentsModelActivities(provider: ModelProvider) {
  return {
    async invokeAgentsModel(call: AgentsModelCall): Promise<AgentsModelAnswer> {
      const model = await provider.getModel(call.modelName);
      const response = await model.getResponse({ ...call.request, signal: Context.current().cancellationSignal });
      return { ...response, usage: JSON.parse(JSON.stringify(response.usage)) as Record<string, unknown> };
    },
  };
}

export type AgentsModelActivities = ReturnType<typeof createAgentsModelActivities>;
