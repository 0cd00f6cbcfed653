/**
 * The planner activity: one planning turn, by the model the worker was given for the run's `planner.kind`
 * (src/planner/model.ts). It records every request it was asked as JSON lines when configured (never in memory).
 * A kind the worker serves no model for is refused, typed and not retried.
 */
import { appendFileSync } from 'node:fs';
import { Context } from '@temporalio/activity';
import type { PlanRequest, PlanResponse } from '../src/domain/activity-contracts';
import { modelFor, type ModelProvider } from '../src/planner/model';

export interface PlannerDeps {
  /** When set, every request the planner receives is appended here as one JSON line. */
  readonly requestLogFile?: string;
}

export function createPlannerActivities(models: readonly ModelProvider[], deps: PlannerDeps = {}) {
  async function planTurn(req: PlanRequest): Promise<PlanResponse> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    if (deps.requestLogFile)
      appendFileSync(deps.requestLogFile, `${JSON.stringify({ at: new Date().toISOString(), attempt, ...req })}\n`);
    return modelFor(models, req.planner.kind).plan(req, {
      attempt,
      scheduledTimestampMs: ctx.info.scheduledTimestampMs,
      startToCloseTimeoutMs: ctx.info.startToCloseTimeoutMs,
      cancellationSignal: ctx.cancellationSignal,
    });
  }

  return { planTurn };
}
