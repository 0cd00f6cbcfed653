/**
 * Why a run stops, in one place. A turn meets these checks in order; `nextStop` answers at each moment a turn
 * learns something (the run opened, a turn began, the model answered, the calls came back, an operator settled
 * what was UNKNOWN, the turn ended), and an interruption (the deadline, a cancellation) maps to its stop here too.
 */
import type { Observation, PlanResponse } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import type { ActorRecord } from '../src/domain/verified-identity';
import type { Projection } from '../src/domain/reducer';
import type { AgentRunInput, Budgets, StopReason } from '../src/domain/run';
import { spentBudget } from './budgets';
import type { SagaOutcome } from './steps/compensate';

export type Stop =
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly detail: string; readonly finalText?: string }
  /** A dispatched call failed downstream: offset what already took effect, then stop (`afterCompensation`). */
  | { readonly kind: 'compensate'; readonly turn: number; readonly failed: readonly Observation[] };

/** What a turn has just learned. */
export type Moment =
  | { readonly at: 'opened'; readonly identityRefused?: string }
  | { readonly at: 'turn'; readonly turn: number }
  | { readonly at: 'model_failed'; readonly cause: string }
  | { readonly at: 'planned'; readonly turn: number; readonly plan: PlanResponse; readonly repeated: number }
  | { readonly at: 'dispatched'; readonly turn: number; readonly results: readonly Observation[] }
  | {
      readonly at: 'operator_waited';
      readonly turn: number;
      readonly results: readonly Observation[];
      /** The calls that were UNKNOWN when the wait began. */
      readonly open: readonly string[];
      readonly settled: boolean;
    }
  | { readonly at: 'turn_end'; readonly results: readonly Observation[] };

/** What the checks read of the run. */
export interface StopView {
  readonly projection: Projection;
  readonly budgets: Budgets;
  readonly input: Pick<AgentRunInput, 'onToolFailure' | 'onDenied'>;
}

const stop = (reason: StopReason, detail: string, finalText?: string): Stop => ({
  kind: 'stop',
  reason,
  detail,
  ...(finalText !== undefined ? { finalText } : {}),
});

const DENIALS: readonly string[] = [
  Failure.AuthorizationDenied,
  Failure.TenantMismatch,
  Failure.ApprovalDenied,
  Failure.ApprovalTimedOut,
];

/** Calls of `results` that failed downstream after their intent was recorded (`among`: only those ids). */
function failedAfterIntent(run: StopView, results: readonly Observation[], among?: readonly string[]): Observation[] {
  return results.filter(
    (o) =>
      o.state === 'FAILED' &&
      (among === undefined || among.includes(o.logicalCallId)) &&
      run.projection.calls[o.logicalCallId]?.intentRecorded === true,
  );
}

/** The stop this moment calls for, or null to go on. */
export function nextStop(run: StopView, m: Moment): Stop | null {
  const { budgets } = run;
  switch (m.at) {
    case 'opened':
      // No model call and no dispatch for a run whose identity did not verify.
      return m.identityRefused === undefined
        ? null
        : stop('authorization_denied', `identity refused (${m.identityRefused})`);
    case 'turn':
      return m.turn > budgets.maxTurns ? stop('budget_exhausted', `turns: ${budgets.maxTurns} used`) : null;
    case 'model_failed':
      return stop('model_failed', m.cause);
    case 'planned': {
      if (m.plan.kind === 'final') return stop('completed', `the model finished after ${m.turn} turn(s)`, m.plan.text);
      const spent = spentBudget(run.projection, budgets);
      if (spent !== null) return stop('budget_exhausted', spent);
      const metered = budgets.maxTokens !== undefined || budgets.maxCostMicros !== undefined;
      // Fail closed: a budget that cannot be measured is not a budget.
      if (metered && m.plan.usage === undefined)
        return stop(
          'budget_exhausted',
          'the model reported no usage: the token and cost budgets cannot be enforced, so nothing more is dispatched',
        );
      if (m.repeated >= budgets.noProgressTurns)
        return stop('budget_exhausted', `no progress: the same proposal ${m.repeated} turns in a row`);
      return null;
    }
    case 'dispatched': {
      const failed = failedAfterIntent(run, m.results);
      if (failed.length > 0 && run.input.onToolFailure !== 'report_to_model')
        return { kind: 'compensate', turn: m.turn, failed };
      const allDenied = m.results.length > 0 && m.results.every((o) => DENIALS.includes(o.error?.code ?? ''));
      if (run.input.onDenied === 'stop' && allDenied)
        return stop(
          'authorization_denied',
          m.results.map((o) => `${o.toolName}: ${o.error?.message ?? ''}`).join('; '),
        );
      return null;
    }
    case 'operator_waited': {
      if (!m.settled) return stop('outcome_unknown', `calls still UNKNOWN at the deadline: ${m.open.join(', ')}`);
      // An operator who settles a call FAILED late: the turn's other effects are offset as for any failed call.
      const failed = failedAfterIntent(run, m.results, m.open);
      if (failed.length > 0 && run.input.onToolFailure !== 'report_to_model')
        return { kind: 'compensate', turn: m.turn, failed };
      return null;
    }
    case 'turn_end':
      return m.results.some((o) => o.error?.code === Failure.BudgetToolCalls)
        ? stop('budget_exhausted', `tool calls: ${budgets.maxToolCalls} used`)
        : null;
  }
}

/** The stop after a failed call's turn was compensated: failed, or an operator must repair. */
export function afterCompensation(failed: readonly Observation[], outcome: SagaOutcome): Stop {
  const why = failureSummary(failed);
  const summary = `offset ${outcome.offset.length}, nothing to offset ${outcome.nothingToOffset.length}`;
  const unsettled = [...outcome.unsettled, ...outcome.noTime];
  if (unsettled.length > 0) {
    return stop(
      'compensation_failed',
      `${why}; ${summary}; compensation did not settle for ${unsettled.join(', ')}: an operator must repair`,
    );
  }
  return stop('tool_failed', `${why}; ${summary} (compensated, not rolled back)`);
}

/** Why a turn is compensated, as the compensation events and the stop detail say it. */
export function failureSummary(failed: readonly Observation[]): string {
  return failed.map((o) => `${o.toolName} ${o.error?.code ?? 'failed'}`).join(', ');
}

/** The deadline came too close for the next step. */
export function deadlineStop(message: string): Stop {
  return stop('deadline_exceeded', message);
}

/** A verified cancel request (or Temporal's cancel) stopped the turn loop. */
export function cancelledStop(inFlight: readonly string[], by: { readonly actor: ActorRecord } | undefined): Stop {
  const who = by ? ` by ${by.actor.principalId}` : '';
  return stop(
    'operator_stopped',
    `cancelled by request${who}${inFlight.length ? `; still unsettled: ${inFlight.join(', ')}` : ''}`,
  );
}
