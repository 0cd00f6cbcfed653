/**
 * The planner activity, routed by `planner.kind`. The embedded default model is scripted: it serves canned
 * proposals per scenario, records every request it was asked as JSON lines when configured (never in memory),
 * and fails loudly when its script is exhausted. Provider call ids are random per response, as a real
 * provider's are. `kind: 'openai'` goes to a real model over Chat Completions (src/planner/openai-planner.ts).
 */
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PlanRequest, PlanResponse } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import type { ScriptedPlannerConfig } from '../src/domain/run';
import type { OpenAIActivityDeps } from '../src/planner/openai-env';
import { createOpenAIPlanner, type OpenAIPlanner, type OpenAIPlanRequest } from '../src/planner/openai-planner';
import { scenarios } from '../src/planner/scenarios';
import { transcriptStoreFromEnv } from '../src/planner/openai-env';

export interface PlannerDeps {
  /** When set, every request the scripted model receives is appended here as one JSON line. */
  readonly requestLogFile?: string;
}

export function createPlannerActivities(deps: PlannerDeps = {}, openai: OpenAIActivityDeps = {}) {
  let openaiPlanner: OpenAIPlanner | undefined;

  function realModel(): OpenAIPlanner {
    if (openaiPlanner) return openaiPlanner;
    if (!openai.client) {
      throw ApplicationFailure.nonRetryable(
        'this worker has no OpenAI client: set OPENAI_API_KEY or OPENAI_BASE_URL in the worker environment',
        'Config.MissingModel',
      );
    }
    openaiPlanner = createOpenAIPlanner({
      client: openai.client,
      transcriptStore: openai.transcriptStore ?? transcriptStoreFromEnv(),
      ...(openai.defaultModel ? { defaultModel: openai.defaultModel } : {}),
    });
    return openaiPlanner;
  }

  function scripted(req: PlanRequest & { planner: ScriptedPlannerConfig }, attempt: number): PlanResponse {
    const scenario = scenarios[req.planner.scenario];
    if (scenario === undefined) {
      throw ApplicationFailure.nonRetryable(
        `scripted model has no scenario "${req.planner.scenario}"`,
        Failure.PlannerMalformed,
      );
    }
    const script = scenario(req.planner.vars ?? {});
    const scripted = script[req.turn - 1];
    const turn = scripted !== undefined && 'decide' in scripted ? scripted.decide(req.observations) : scripted;
    if (turn === undefined) {
      throw ApplicationFailure.nonRetryable(
        `scripted model exhausted: scenario "${req.planner.scenario}" has ${script.length} turns, asked for turn ${req.turn}`,
        Failure.PlannerScriptExhausted,
      );
    }
    if ('final' in turn) return { kind: 'final', text: turn.final(req.observations), attempt };
    return {
      kind: 'proposals',
      attempt,
      proposals: turn.proposals.map((p) => ({
        providerCallId: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        name: p.name,
        argumentsJson: typeof p.arguments === 'string' ? p.arguments : JSON.stringify(p.arguments),
      })),
    };
  }

  async function planTurn(req: PlanRequest): Promise<PlanResponse> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    if (deps.requestLogFile)
      appendFileSync(deps.requestLogFile, `${JSON.stringify({ at: new Date().toISOString(), attempt, ...req })}\n`);
    if (req.planner.kind === 'openai') {
      return realModel().plan(req as OpenAIPlanRequest, {
        attempt,
        scheduledTimestampMs: ctx.info.scheduledTimestampMs,
        startToCloseTimeoutMs: ctx.info.startToCloseTimeoutMs,
        cancellationSignal: ctx.cancellationSignal,
      });
    }
    return scripted(req as PlanRequest & { planner: ScriptedPlannerConfig }, attempt);
  }

  return { planTurn };
}
