/**
 * A model is the worker's, not the run's. A run's input names which kind of model plans it (`planner.kind`) and
 * that model's settings; the worker is given the models it serves, as `ModelProvider`s, the way Temporal's agent
 * samples inject a model provider into the worker. A worker asked for a kind it was not given refuses the turn
 * (`Config.MissingModel`, not retried): the run stops with `model_failed`, and nothing is dispatched.
 *
 * The built-in providers: `openAIModel` (any OpenAI-compatible Chat Completions server) and, for the demo, the
 * tests and the fault lab, `scriptedModel(scenarios)` (src/planner/scripted-model.ts), which a worker serves only
 * when it is given one (the lab's workers: `LEDGERLOOP_SCRIPTED_MODEL=1`, lab/scenarios.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { PlanRequest, PlanResponse } from '../domain/activity-contracts';
import type { PlannerConfig } from '../domain/run';
import type { OpenAIActivityDeps } from './openai-env';
import { createOpenAIPlanner, type OpenAIPlanner, type OpenAIPlanRequest } from './openai-planner';
import { transcriptStoreFromEnv } from './openai-env';
import type { ToolRegistry } from '../tools/registry';

/** What the planner activity knows of the attempt it runs in. */
export interface ModelCall {
  readonly attempt: number;
  readonly scheduledTimestampMs: number;
  readonly startToCloseTimeoutMs: number;
  readonly cancellationSignal: AbortSignal;
}

export interface ModelProvider {
  /** The `planner.kind` of the runs this model plans. */
  readonly kind: PlannerConfig['kind'];
  /** One planning turn. Throws an `ApplicationFailure` of a `Planner.*` type for what the model did wrong. */
  plan(req: PlanRequest, call: ModelCall): Promise<PlanResponse>;
}

export const MISSING_MODEL = 'Config.MissingModel';

/**
 * The model for `planner.kind: 'openai'`, built on first use from the worker's client and transcript store,
 * offered `tools` (default the built-in tools).
 */
export function openAIModel(deps: OpenAIActivityDeps = {}, tools?: ToolRegistry): ModelProvider {
  let planner: OpenAIPlanner | undefined;
  return {
    kind: 'openai',
    plan(req, call) {
      if (!deps.client) {
        throw ApplicationFailure.nonRetryable(
          'this worker has no OpenAI client: set OPENAI_API_KEY or OPENAI_BASE_URL in the worker environment',
          MISSING_MODEL,
        );
      }
      planner ??= createOpenAIPlanner({
        client: deps.client,
        transcriptStore: deps.transcriptStore ?? transcriptStoreFromEnv(),
        ...(deps.defaultModel ? { defaultModel: deps.defaultModel } : {}),
        ...(tools ? { tools } : {}),
      });
      return planner.plan(req as OpenAIPlanRequest, call);
    },
  };
}

/** The provider for `kind` among `models`, or a typed refusal naming what this worker serves. */
export function modelFor(models: readonly ModelProvider[], kind: string): ModelProvider {
  const found = models.find((m) => m.kind === kind);
  if (found) return found;
  const served = models.map((m) => m.kind).join(', ') || 'none';
  throw ApplicationFailure.nonRetryable(
    `this worker serves no ${kind} model (it serves: ${served})${kind === 'scripted' ? '; a worker process serves the scripted model only with LEDGERLOOP_SCRIPTED_MODEL=1' : ''}`,
    MISSING_MODEL,
  );
}
