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
  | DecidedStop
  /** A dispatched call failed downstream: offset what already took effect, then stop (`afterCompensation`). */
  | { readonly kind: 'compensate'; readonly turn: number; readonly failed: readonly Observation[] };

/** A decided stop: why, and the sentence its detail adds. */
export interface DecidedStop {
  readonly kind: 'stop';
  readonly reason: StopReason;
  readonly detail: string;
  readonly finalText?: string;
}

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

const stop = (reason: StopReason, detail: string, finalText?: string): DecidedStop => ({
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
export function afterCompensation(failed: readonly Observation[], outcome: SagaOutcome, p: Projection): DecidedStop {
  const why = failureSummary(failed);
  const summary = sagaSummary(outcome, p);
  if (outcome.unsettled.length + outcome.noTime.length > 0)
    return stop('compensation_failed', `${why}; ${summary}: an operator must repair`);
  return stop('tool_failed', `${why}; ${summary} (compensated, not rolled back)`);
}

/** What a saga settled and what it left, each forward call named with its tool. */
export function sagaSummary(outcome: SagaOutcome, p: Projection): string {
  const named = (ids: readonly string[]) => ids.map((id) => `${id} (${p.calls[id]?.toolName ?? '?'})`).join(', ');
  const parts = [
    outcome.offset.length > 0 ? `offset ${named(outcome.offset)}` : '',
    outcome.nothingToOffset.length > 0 ? `nothing to offset for ${named(outcome.nothingToOffset)}` : '',
    outcome.unsettled.length > 0 ? `compensation did not settle for ${named(outcome.unsettled)}` : '',
    outcome.noTime.length > 0 ? `no time left to compensate ${named(outcome.noTime)}` : '',
  ].filter((x) => x !== '');
  return parts.length > 0 ? parts.join('; ') : 'nothing to offset';
}

/**
 * The stop once what stood is settled, so that its reason says no more than what it leaves: `outcome_unknown`
 * claims a call is still UNKNOWN (`stillUnknown`: any call, a compensation included). When the settlement found
 * every such call's outcome (a compensation that found nothing under its key and sealed it, say), the run stops for
 * what ended its wait for an operator: the deadline.
 */
export function afterSettlement(s: DecidedStop, stillUnknown: boolean): DecidedStop {
  if (s.reason !== 'outcome_unknown' || stillUnknown) return s;
  return {
    ...s,
    reason: 'deadline_exceeded',
    detail: `the deadline passed while calls were UNKNOWN; the stop settled them, none is left UNKNOWN (${s.detail})`,
  };
}

/**
 * A cancel the run accepted before its stop was recorded is honoured by the stop: `operator_stopped`. The reason
 * the run was already stopping for stays in the detail. A run the model completed keeps `completed`: it has nothing
 * standing to settle, and no turn left to stop (the cancel is recorded all the same).
 */
export function honourCancel(s: DecidedStop, by: { readonly actor: ActorRecord } | undefined): DecidedStop {
  if (s.reason === 'operator_stopped' || s.reason === 'completed') return s;
  const who = by ? ` by ${by.actor.principalId}` : '';
  return {
    ...s,
    reason: 'operator_stopped',
    detail: `cancelled by request${who}, honoured at the stop (${s.reason}: ${s.detail})`,
  };
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
