/**
 * Activity factory: the worker owns the dependencies (downstream clients, the model, its identity) and passes
 * them in. Workflows import only the type `Activities`.
 */
import { createAuthorizeActivities, type AuthorizeDeps } from './authorize.activities';
import { createDispatchActivities, type DispatchDeps } from './dispatch.activities';
import { createPlannerActivities, type PlannerDeps } from './planner.activities';
import type { OpenAIActivityDeps } from '../src/planner/openai-env';
import { StaticPolicyStore } from '../src/policy/policy-store';

export interface ActivityDeps extends DispatchDeps {
  /** The current policy and the capability signing key; default: the built-in policy, no capabilities. */
  readonly authorize?: Partial<AuthorizeDeps>;
  readonly planner?: PlannerDeps;
  /** The real-model planner (`planner.kind: 'openai'`): a client built once per worker and a transcript store. */
  readonly openai?: OpenAIActivityDeps;
}

export function createActivities(deps: ActivityDeps) {
  const { planTurn } = createPlannerActivities(deps.planner, deps.openai);
  const { dispatchTool, reconcileCall } = createDispatchActivities(deps); // deps.authorize: signing at dispatch
  const { authorizeCall } = createAuthorizeActivities({
    policies: deps.authorize?.policies ?? new StaticPolicyStore(),
    ...(deps.authorize?.capabilityKey ? { capabilityKey: deps.authorize.capabilityKey } : {}),
  });
  return { planTurn, dispatchTool, reconcileCall, authorizeCall };
}

export type Activities = ReturnType<typeof createActivities>;
