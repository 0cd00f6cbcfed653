/**
 * The workflow-safe form of the OpenAI Agents SDK's model: a `Model` whose `getResponse` is an activity, and the
 * `ModelProvider` a `Runner` inside a workflow is given. The Agents loop (`Runner.run`: turns, tool calls,
 * handoffs, guardrails) runs in the workflow and replays from history; only the model call leaves it, as Temporal's
 * Python integration does. The request crosses as JSON (its `signal` stays behind: cancelling the activity is the
 * workflow's cancellation); the usage comes back as data and is rebuilt as the SDK's `Usage`.
 *
 * Streaming (`getStreamedResponse`) is refused: a stream of events cannot be an activity's result.
 */
import './sandbox-globals';
import { Usage, type Model, type ModelProvider, type ModelRequest, type ModelResponse } from '@openai/agents-core';
import { ApplicationFailure, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { AgentsModelActivities } from '../../activities/agents-model.activities';

/**
 * The model activity's options. Default: 60 s per attempt, 3 attempts 1 s apart and doubling, because Temporal's
 * default is unlimited attempts, which a paid call must never have. Build the worker's provider client with its
 * own retries off (`maxRetries: 0`), so these are the only ones; a refusal that repeating cannot change is not
 * retried at all (activities/agents-model.activities.ts). Pass your own (a `scheduleToCloseTimeout` inside the
 * workflow's deadline, say) to `ActivityModelProvider`.
 */
export const AGENTS_MODEL_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '60s',
  retry: { maximumAttempts: 3, initialInterval: '1s', backoffCoefficient: 2 },
};

export class ActivityModel implements Model {
  private readonly activities: AgentsModelActivities;

  constructor(
    readonly modelName: string | undefined,
    options: ActivityOptions = AGENTS_MODEL_ACTIVITY,
  ) {
    this.activities = proxyActivities<AgentsModelActivities>(options);
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const { signal: _signal, ...data } = request;
    const response = await this.activities.invokeAgentsModel({
      ...(this.modelName !== undefined ? { modelName: this.modelName } : {}),
      request: data,
    });
    return { ...response, usage: Usage.fromJSON(response.usage) };
  }

  getStreamedResponse(): AsyncIterable<never> {
    throw ApplicationFailure.nonRetryable(
      'streamed model responses are not served in a workflow: run the agent with stream: false',
      'AgentsModel.StreamingUnsupported',
    );
  }
}

/** The provider a workflow's `Runner` is built with: every model name becomes an `ActivityModel`. */
export class ActivityModelProvider implements ModelProvider {
  constructor(private readonly options: ActivityOptions = AGENTS_MODEL_ACTIVITY) {}

  getModel(modelName?: string): Model {
    return new ActivityModel(modelName, this.options);
  }
}
