/**
 * `ledgerloop`: the runtime's public entry for a user project. Tools are declared with `ledgerloop/workflow-tools`
 * (the worker's tools module imports `ledgerloop/tool-registry`), a downstream service mounts
 * `ledgerloop/services`, and this entry starts workers and runs. examples/ticketing/ uses all three.
 */
export { createWorker, WorkerConfigError, type CreateWorkerOptions, type PolicyDocument } from './worker/create-worker';
export { createLedgerloopWorker, DEFAULT_TASK_QUEUE, type LedgerloopWorkerOptions } from './worker/worker';
export { DownstreamClient, type Downstream, type DownstreamClientOptions } from './downstream/client';
export { buildWorkflowBundle, writeWorkflowBundle, type BundleOptions } from './worker/bundle';
export { loadToolsModule } from './worker/tools-module';
export { replayHistory, type ReplayOptions } from './worker/replay';
export { ReplayToolsMissingError, toolsOfHistory } from './client/history-tools';

// Models: a provider per `planner.kind`, given to the worker (docs/models.md).
export { openAIModel, type ModelCall, type ModelProvider } from './planner/model';
export { scriptedModel } from './planner/scripted-model';
export type { Scenario, ScriptedProposal, ScriptedTurn } from './planner/scripted-model';

// Starting runs and reading their ledger.
export { readLedger, startAgentRun, StrategyForbiddenError, type StartRunOptions } from './client/runs';
export { newRunWorkflowId, RunIdError, tenantOfWorkflowId } from './client/run-ids';
export type {
  AgentRunInput,
  AgentRunResult,
  Budgets,
  CallSummary,
  PlannerConfig,
  Principal,
  RetryStrategy,
  StopReason,
} from './domain/run';

// Policy, capabilities and identities.
export { DEFAULT_POLICY, Policy, type PolicyRule } from './policy/policy-format';
export { FilePolicyStore, StaticPolicyStore, type PolicyStore } from './policy/policy-store';
export {
  generateCapabilityTrust,
  generateSigningKey,
  jwksJson,
  keySetFromJwks,
  parseSigningKey,
  publicJwkOf,
  serializeSigningKey,
  type CapabilityJwks,
  type CapabilitySigningKey,
  type CapabilityTrust,
} from './policy/capability-keys';
export { parseIdentityConfig, staticIdentitySource, type IdentityConfig, type IdentitySource } from './identity/config';
export { createDevIssuer, issueIdentityToken, newIssuerKey, type DevIssuer, type IssueOptions } from './identity/issue';
export { ACT_MAX_LIFETIME_SEC, type ActPurpose, type TokenPurpose, type TokenScope } from './identity/purpose';
export { normalisePrincipalId, PrincipalIdError } from './identity/principal-id';
export { TokenInClearError } from './client/token-transport';

// A Temporal server for development: TEMPORAL_ADDRESS (its search attributes ensured), else a dev server started
// from the repository's pinned CLI (`npm run setup`).
export {
  connectOrStart as connectOrStartDevServer,
  ensureSearchAttributes,
  type ServerHandle,
} from './server/dev-server';

// The project config every `ledgerloop` command reads (`ledgerloop.config.mjs`; docs/cli.md), and its keys.
export {
  defineConfig,
  loadProjectConfig,
  ProjectConfigError,
  type LedgerloopConfig,
  type ModelConfig,
  type ProjectConfig,
} from './project/config';
