/**
 * Activity factory: the worker owns the dependencies (downstream clients, the model, its identity) and passes
 * them in. Workflows import only the type `Activities`.
 */
import { createAuthorizeActivities, resolveAuthorizeDeps } from './authorize.activities';
import { createIdentityActivities, type IdentityDeps } from './identity.activities';
import { createDispatchActivities, type DispatchDeps } from './dispatch.activities';
import { createPlannerActivities, type PlannerDeps } from './planner.activities';
import { createQuotaActivities, type QuotaDeps } from './quota.activities';
import type { OpenAIActivityDeps } from '../src/planner/openai-env';
import { openAIModel, type ModelProvider } from '../src/planner/model';
import type { ToolRegistry } from '../src/tools/registry';

/** `authorize` (from DispatchDeps): the current policy and the signing key; default the built-in policy, no key. */
export interface ActivityDeps extends DispatchDeps {
  readonly planner?: PlannerDeps;
  /**
   * The models this worker plans with, by `planner.kind` (src/planner/model.ts), e.g. `[scriptedModel()]`. An
   * OpenAI-compatible model is always added from `openai` unless one is given here.
   */
  readonly models?: readonly ModelProvider[];
  /** The real-model planner (`planner.kind: 'openai'`): a client built once per worker and a transcript store. */
  readonly openai?: OpenAIActivityDeps;
  /** The store of the cross-run rate-limit windows (src/stores/quota-store.ts). Absent: those limits fail closed. */
  readonly quota?: QuotaDeps;
  /** The identity issuers that verify run principals, approvers and operators; default LEDGERLOOP_IDENTITY_ISSUERS. */
  readonly identity?: IdentityDeps;
  /**
   * The tool declarations the workflow bundle carries (a user's tool module); default the built-in tools. The
   * signer re-derives calls from them and an OpenAI-compatible model is offered them.
   */
  readonly tools?: ToolRegistry;
}

export function createActivities(deps: ActivityDeps) {
  const given = deps.models ?? [];
  const models = given.some((m) => m.kind === 'openai') ? given : [...given, openAIModel(deps.openai, deps.tools)];
  // One policy store and one signing key for the authorizer and for signing at dispatch.
  const authorize = resolveAuthorizeDeps(deps.tools ? { ...deps.authorize, tools: deps.tools } : deps.authorize);
  const { verifyIdentity } = createIdentityActivities({ ...deps.identity, policies: authorize.policies });
  // A new run's first planning turn verifies its opening with the same issuers and policy store.
  const { planTurn } = createPlannerActivities(models, deps.planner ?? {}, verifyIdentity);
  const { dispatchTool, reconcileCall } = createDispatchActivities({ ...deps, authorize });
  const { readPolicy } = createAuthorizeActivities(authorize);
  const { reserveQuota, releaseQuota } = createQuotaActivities(deps.quota);
  return { planTurn, dispatchTool, reconcileCall, readPolicy, reserveQuota, releaseQuota, verifyIdentity };
}

export type Activities = ReturnType<typeof createActivities>;
