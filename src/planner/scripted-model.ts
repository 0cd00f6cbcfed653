/**
 * The scripted model: canned proposals per scenario (src/planner/scenarios.ts), for the demo, the tests, the
 * fault lab and the bench. It is a `ModelProvider` a worker is given, never part of a production worker by default.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { Failure } from '../domain/failures';
import type { ScriptedPlannerConfig } from '../domain/run';
import type { ModelProvider } from './model';
import { scenarios as builtinScenarios, type Scenario } from './scenarios';

/** A worker process serves the scripted model only when this variable is exactly "1". */
export const SCRIPTED_MODEL_ENV = 'LEDGERLOOP_SCRIPTED_MODEL';

export function scriptedModel(scenarios: Readonly<Record<string, Scenario>> = builtinScenarios): ModelProvider {
  return {
    kind: 'scripted',
    async plan(req, { attempt }) {
      const planner = req.planner as ScriptedPlannerConfig;
      const scenario = scenarios[planner.scenario];
      if (scenario === undefined) {
        throw ApplicationFailure.nonRetryable(
          `scripted model has no scenario "${planner.scenario}"`,
          Failure.PlannerMalformed,
        );
      }
      const script = scenario(planner.vars ?? {});
      const scripted = script[req.turn - 1];
      const turn = scripted !== undefined && 'decide' in scripted ? scripted.decide(req.observations) : scripted;
      if (turn === undefined) {
        throw ApplicationFailure.nonRetryable(
          `scripted model exhausted: scenario "${planner.scenario}" has ${script.length} turns, asked for turn ${req.turn}`,
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
    },
  };
}
