/**
 * Activity factory: the worker owns the dependencies (downstream clients, the model, its identity) and passes
 * them in. Workflows import only the type `Activities`.
 */
import { createDispatchActivities, type DispatchDeps } from './dispatch.activities';
import { createPlannerActivities, type PlannerDeps } from './planner.activities';

export interface ActivityDeps extends DispatchDeps {
  readonly planner?: PlannerDeps;
}

export function createActivities(deps: ActivityDeps) {
  const { planTurn } = createPlannerActivities(deps.planner);
  const { dispatchTool, reconcileCall } = createDispatchActivities(deps);
  return { planTurn, dispatchTool, reconcileCall };
}

export type Activities = ReturnType<typeof createActivities>;
