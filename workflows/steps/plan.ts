/**
 * Step 1 of a turn, `plan`: the model proposes. One activity (Temporal retries it, bounded by the run deadline);
 * the ledger records the request and the response (how many proposals, whether final, the usage priced here).
 * The model's text and arguments are untrusted data: `validate` reads them next.
 */
import { isCancellation } from '@temporalio/workflow';
import { DeadlineTooClose, modelCallPreset, type DeadlineClock } from '../../src/domain/activity-presets';
import type { Observation, PlanResponse } from '../../src/domain/activity-contracts';
import { DEFAULT_PRICES, type AgentRunInput } from '../../src/domain/run';
import { costMicros } from '../budgets';
import type { Ledger } from '../ledger';
import { activities } from '../proxies';

export type Planned =
  { readonly ok: true; readonly plan: PlanResponse } | { readonly ok: false; readonly cause: string };

export async function plan(
  run: {
    readonly runId: string;
    readonly input: AgentRunInput;
    readonly ledger: Ledger;
    readonly clock: () => DeadlineClock;
  },
  turn: number,
  observations: readonly Observation[],
): Promise<Planned> {
  const { ledger, input } = run;
  let response: PlanResponse;
  try {
    const options = modelCallPreset(run.clock(), `plan turn ${turn}`);
    ledger.append({ type: 'ModelRequestStarted', turn });
    response = await activities.planTurn.executeWithOptions(options, [
      { runId: run.runId, turn, goal: input.goal, planner: input.planner, observations },
    ]);
  } catch (err) {
    // The deadline and a cancellation end the run elsewhere; any other failure is the model's.
    if (err instanceof DeadlineTooClose || isCancellation(err)) throw err;
    const cause =
      (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    return { ok: false, cause };
  }
  const usage = response.usage
    ? { ...response.usage, costMicros: costMicros(response.usage, input.prices ?? DEFAULT_PRICES) }
    : undefined;
  ledger.append({
    type: 'ModelResponseRecorded',
    turn,
    proposals: response.kind === 'proposals' ? response.proposals.length : 0,
    final: response.kind === 'final',
    attempt: response.attempt,
    usage,
  });
  return { ok: true, plan: response };
}
