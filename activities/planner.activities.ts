/**
 * The planner activity. The embedded default model is scripted: it serves canned proposals per scenario,
 * records every request it was asked (in memory and, when configured, as JSON lines), and fails loudly when
 * its script is exhausted. Provider call ids are random per response, as a real provider's are.
 */
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PlanRequest, PlanResponse } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { scenarios } from '../src/planner/scenarios';

export interface PlannerDeps {
  /** When set, every request the scripted model receives is appended here as one JSON line. */
  readonly requestLogFile?: string;
}

export function createPlannerActivities(deps: PlannerDeps = {}) {
  const asked: PlanRequest[] = [];

  async function planTurn(req: PlanRequest): Promise<PlanResponse> {
    const attempt = Context.current().info.attempt;
    asked.push(req);
    if (deps.requestLogFile) appendFileSync(deps.requestLogFile, `${JSON.stringify({ at: new Date().toISOString(), attempt, ...req })}\n`);
    const scenario = scenarios[req.planner.scenario];
    if (scenario === undefined) {
      throw ApplicationFailure.nonRetryable(`scripted model has no scenario "${req.planner.scenario}"`, Failure.PlannerMalformed);
    }
    const script = scenario(req.planner.vars ?? {});
    const turn = script[req.turn - 1];
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

  return { planTurn, askedRequests: (): readonly PlanRequest[] => asked };
}
