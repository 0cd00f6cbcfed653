/**
 * The scripted model: canned proposals per scenario, for the demo, the tests, the fault lab and the bench (their
 * scenarios live in lab/scenarios.ts). It is a `ModelProvider` a worker is given with the scenarios it serves,
 * never part of a production worker by default. The run names a scenario in its planner settings, which only this
 * model reads: `{ kind: 'scripted', scenario, vars? }`; anything else is refused with `Planner.ConfigInvalid`.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { Observation } from '../domain/activity-contracts';
import { Failure } from '../domain/failures';
import type { PlannerConfig } from '../domain/run';
import type { ModelProvider } from './model';

/** A worker process serves the scripted model only when this variable is exactly "1". */
export const SCRIPTED_MODEL_ENV = 'LEDGERLOOP_SCRIPTED_MODEL';

export interface ScriptedProposal {
  readonly name: string;
  /** Either an object (serialized as the model would) or raw text, to model malformed output. */
  readonly arguments: unknown;
}

type StaticTurn =
  | { readonly proposals: readonly ScriptedProposal[] }
  | { readonly final: (observations: readonly Observation[]) => string };

/** A turn: canned proposals, a final answer, or a choice between them made on what the model was shown. */
export type ScriptedTurn = StaticTurn | { readonly decide: (observations: readonly Observation[]) => StaticTurn };

export type Scenario = (vars: Readonly<Record<string, unknown>>) => readonly ScriptedTurn[];

/** The scripted model's own planner settings: which scenario, and the values its canned proposals use. */
export type ScriptedPlannerConfig = {
  readonly kind: 'scripted';
  /** A scenario the worker's scripted model knows, e.g. `wallet-debit`. */
  readonly scenario: string;
  readonly vars?: Readonly<Record<string, unknown>>;
};

/** The scripted settings in `planner`, or a non-retryable `Planner.ConfigInvalid` naming what is wrong. */
export function scriptedConfigOf(planner: PlannerConfig): ScriptedPlannerConfig {
  const { scenario, vars } = planner as { scenario?: unknown; vars?: unknown };
  const wrong =
    typeof scenario !== 'string' || scenario === ''
      ? 'planner.scenario: a scenario name'
      : vars !== undefined && (typeof vars !== 'object' || vars === null || Array.isArray(vars))
        ? 'planner.vars: an object'
        : undefined;
  if (wrong !== undefined) {
    throw ApplicationFailure.nonRetryable(
      `the scripted model's settings are invalid: ${wrong}`,
      Failure.PlannerConfigInvalid,
    );
  }
  return planner as unknown as ScriptedPlannerConfig;
}

export function scriptedModel(scenarios: Readonly<Record<string, Scenario>>): ModelProvider {
  return {
    kind: 'scripted',
    async plan(req, { attempt }) {
      const planner = scriptedConfigOf(req.planner);
      const scenario = Object.hasOwn(scenarios, planner.scenario) ? scenarios[planner.scenario] : undefined;
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
