/**
 * The planner activity: one planning turn, by the model the worker was given for the run's `planner.kind`
 * (src/planner/model.ts). It records every request it was asked as JSON lines when configured (never in memory).
 * A kind the worker serves no model for is refused, typed and not retried.
 *
 * A new run's first request carries its opening (`RunOpening`): the token is verified, and checked to name the
 * run's principal and tenant, before the model is called. A token that does not verify or names someone else is
 * refused with the identity activity's typed failure (`Identity.*`, not retried), and the model never hears of the
 * run. Every attempt verifies afresh: a retry after a lost response is decided by the token as it is then.
 */
import { appendFileSync } from 'node:fs';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PlanTurnRequest, PlanTurnResponse } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { principalMismatch } from '../src/domain/verified-identity';
import { modelFor, type ModelProvider } from '../src/planner/model';
import type { createIdentityActivities } from './identity.activities';

export interface PlannerDeps {
  /** When set, every request the planner receives is appended here as one JSON line (an opening's token never). */
  readonly requestLogFile?: string;
}

/** The identity activity's verification, which an opening is checked by (one verifier, one set of issuers). */
export type VerifyOpening = ReturnType<typeof createIdentityActivities>['verifyIdentity'];

export function createPlannerActivities(
  models: readonly ModelProvider[],
  deps: PlannerDeps,
  verifyOpening: VerifyOpening,
) {
  async function planTurn(req: PlanTurnRequest): Promise<PlanTurnResponse> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const { opening, ...request } = req;
    if (deps.requestLogFile) {
      const logged = opening ? { ...request, opening: { principal: opening.principal } } : request;
      appendFileSync(deps.requestLogFile, `${JSON.stringify({ at: new Date().toISOString(), attempt, ...logged })}\n`);
    }
    const opened = opening ? await open(opening) : undefined;
    const response = await modelFor(models, request.planner.kind)
      .plan(request, {
        attempt,
        scheduledTimestampMs: ctx.info.scheduledTimestampMs,
        startToCloseTimeoutMs: ctx.info.startToCloseTimeoutMs,
        cancellationSignal: ctx.cancellationSignal,
      })
      .catch((err: unknown) => {
        throw opened ? modelsOwn(err) : err;
      });
    return opened ? { ...response, opening: opened } : response;
  }

  /**
   * A model's failure on an opening turn, typed so that it cannot pass for the opening's refusal: a provider's
   * `Identity.*` failure becomes `Planner.Identity.*` (retryable or not, as it was), and the run records the model's
   * failure, not a refused identity.
   */
  function modelsOwn(err: unknown): unknown {
    if (!(err instanceof ApplicationFailure) || !err.type?.startsWith('Identity.')) return err;
    return ApplicationFailure.create({
      type: `Planner.${err.type}`,
      message: err.message,
      nonRetryable: err.nonRetryable === true,
      cause: err,
    });
  }

  /** Verify an opening before any model call; refuse, typed and not retried, what cannot open the run. */
  async function open(opening: NonNullable<PlanTurnRequest['opening']>) {
    const { policy, ...identity } = await verifyOpening({ token: opening.token, includePolicy: true });
    const mismatch = principalMismatch(identity, opening.principal);
    if (mismatch !== undefined)
      throw ApplicationFailure.create({ type: Failure.IdentityMismatch, nonRetryable: true, message: mismatch });
    return policy ? { identity, policy } : { identity };
  }

  return { planTurn };
}
