/**
 * `ledgerloop`: the client side of the runtime, for any process that starts runs, reads their ledger or acts on
 * them (approvals, operator resolutions, cancellation). It loads no worker code.
 *
 * The other entries: `ledgerloop/worker` (createWorker, LedgerloopPlugin, bundles, replay, models),
 * `ledgerloop/workflow-tools` and `ledgerloop/tool-registry` (declaring tools), `ledgerloop/services` (a downstream
 * service on the services kit), `ledgerloop/codec` (payload encryption) and `ledgerloop/testing` (a dev server
 * for a project's tests).
 */

// Starting runs and reading their ledger.
export {
  DEFAULT_TASK_QUEUE,
  readLedger,
  startAgentRun,
  StrategyForbiddenError,
  RunInputTooDeepError,
  type StartRunOptions,
} from './client/runs';
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
} from '../src/domain/run';
export type { CallState, LedgerEvent, LedgerEventType } from '../src/domain/ledger-events';
export { Failure, type FailureType } from '../src/domain/failures';

// The run's messages: the approval, operator and cancellation updates and the queries (workflows/definitions.ts).
export {
  decideApprovalUpdate,
  ledgerQuery,
  pendingApprovalsQuery,
  requestCancelUpdate,
  resolveCallUpdate,
  type ApprovalDecisionInput,
  type CancelRequest,
  type OperatorResolution,
  type PendingApproval,
} from '../workflows/definitions';
export type { LedgerSnapshot } from '../workflows/ledger';

// Payload encryption: the data converter a client (and its workers) must share.
export {
  CODEC_KEYS_ENV,
  CODEC_STRICT_ENV,
  codecFromEnv,
  dataConverterFromEnv,
  generateCodecKeys,
  ledgerloopDataConverter,
  parseCodecKeys,
} from '../src/codec/data-converter';
export {
  checkPayloadEncryption,
  encryptsPayloads,
  PayloadsInClearError,
  TokenInClearError,
  type EncryptionCheckOptions,
} from './client/token-transport';

// Policy, capabilities and identities.
export { DEFAULT_POLICY, Policy, type PolicyRule } from '../src/domain/policy-format';
export { FilePolicyStore, StaticPolicyStore, type PolicyStore } from '../src/stores/policy-store';
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
} from '../src/capability/capability-keys';
export {
  parseIdentityConfig,
  staticIdentitySource,
  type IdentityConfig,
  type IdentitySource,
} from '../src/identity/config';
export {
  createDevIssuer,
  issueIdentityToken,
  newIssuerKey,
  type DevIssuer,
  type IssueOptions,
} from '../src/identity/issue';
export { ACT_MAX_LIFETIME_SEC, type ActPurpose, type TokenPurpose, type TokenScope } from '../src/identity/purpose';
export { normalisePrincipalId, PrincipalIdError } from '../src/domain/principal-id';

// A Temporal server for development: TEMPORAL_ADDRESS (its search attributes ensured), else a dev server started
// from the Temporal CLI (on PATH, TEMPORAL_CLI, or the repository's pinned one).
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
