/**
 * Step 1 of a turn, `plan`: the model proposes. One activity (Temporal retries it, bounded by the run deadline);
 * the ledger records the request and the response (how many proposals, whether final, the usage priced here).
 * The model's text and arguments are untrusted data: `validate` reads them next.
 *
 * A new run's first turn is asked at its opening (`planOpening`): the same activity verifies the run's token
 * before it calls the model, and the turn is recorded once the run is (`recordFirstPlan`), in the same order as
 * any turn's.
 */
import { isCancellation } from '@temporalio/workflow';
import { DeadlineTooClose, modelCallPreset } from '../../src/domain/activity-presets';
import type {
  Observation,
  OpenedIdentity,
  PlanRequest,
  PlanResponse,
  RunOpening,
} from '../../src/domain/activity-contracts';
import { DEFAULT_PRICES } from '../../src/domain/run';
import { costMicros } from '../budgets';
import type { RunModel } from '../model';
import { activities } from '../proxies';

export type Planned =
  { readonly ok: true; readonly plan: PlanResponse } | { readonly ok: false; readonly cause: string };

/** What planning reads of the run. */
type PlanningRun = Pick<RunModel, 'runId' | 'input' | 'ledger' | 'clock'>;

function request(run: PlanningRun, turn: number, observations: readonly Observation[]): PlanRequest {
  const { input } = run;
  return { runId: run.runId, turn, goal: input.goal, planner: input.planner, observations };
}

/** The model's failure, in a sentence: the activity failure's cause when it has one. */
export function modelFailureCause(err: unknown): string {
  return (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
}

export async function plan(run: PlanningRun, turn: number, observations: readonly Observation[]): Promise<Planned> {
  let response: PlanResponse;
  try {
    const options = modelCallPreset(run.clock(), `plan turn ${turn}`);
    run.ledger.append({ type: 'ModelRequestStarted', turn });
    response = await activities.planTurn.executeWithOptions(options, [request(run, turn, observations)]);
  } catch (err) {
    // The deadline and a cancellation end the run elsewhere; any other failure is the model's.
    if (err instanceof DeadlineTooClose || isCancellation(err)) throw err;
    return { ok: false, cause: modelFailureCause(err) };
  }
  return recordResponse(run, turn, response);
}

/**
 * A new run's first turn with its opening: the activity verifies the token and its principal, then calls the
 * model. Nothing is recorded yet (the run is created from what the opening verified). Throws what the activity
 * throws (an `Identity.*` refusal, the model's failure, a cancellation) and `DeadlineTooClose`. `opened` is absent
 * when the planner did not verify the opening (a worker built before it could): the caller verifies on its own.
 */
export async function planOpening(
  run: PlanningRun,
  opening: RunOpening,
): Promise<{ readonly opened?: OpenedIdentity; readonly response: PlanResponse }> {
  const options = modelCallPreset(run.clock(), 'open the run; plan turn 1');
  const { opening: opened, ...rest } = await activities.planTurn.executeWithOptions(options, [
    { ...request(run, 1, []), opening },
  ]);
  // `Omit` over the response union loses its discriminant; what is left is the model's response, whole.
  const response = rest as PlanResponse;
  return opened ? { opened, response } : { response };
}

/** Record the first turn asked at the opening, as `plan` records any turn: the request, then the response. */
export function recordFirstPlan(run: PlanningRun, first: Planned): Planned {
  run.ledger.append({ type: 'ModelRequestStarted', turn: 1 });
  return first.ok ? recordResponse(run, 1, first.plan) : first;
}

function recordResponse(run: PlanningRun, turn: number, response: PlanResponse): Planned {
  const usage = response.usage
    ? { ...response.usage, costMicros: costMicros(response.usage, run.input.prices ?? DEFAULT_PRICES) }
    : undefined;
  run.ledger.append({
    type: 'ModelResponseRecorded',
    turn,
    proposals: response.kind === 'proposals' ? response.proposals.length : 0,
    final: response.kind === 'final',
    attempt: response.attempt,
    usage,
  });
  return { ok: true, plan: response };
}
