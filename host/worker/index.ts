/**
 * `ledgerloop/worker`: the worker side. `LedgerloopPlugin` joins a team's own `Worker.create` (and `Client`);
 * `createWorker` connects and starts one in a call. Models, prebuilt bundles and replay are here too.
 */
export {
  LedgerloopPlugin,
  LEDGERLOOP_PLUGIN_NAME,
  WorkerConfigError,
  type LedgerloopPluginOptions,
  type PolicyDocument,
} from './plugin';
export { createWorker, type CreateWorkerOptions } from './create-worker';
export { createLedgerloopWorker, DEFAULT_TASK_QUEUE, type LedgerloopWorkerOptions } from './worker';
export { buildWorkflowBundle, writeWorkflowBundle, WORKFLOWS_PATH, type BundleOptions } from './bundle';
export { loadToolsModule } from './tools-module';
export { registerSearchAttributes, SearchAttributesMissing } from './search-attributes';
export { replayHistory, type ReplayOptions } from './replay';
export { ReplayToolsMissingError, toolsOfHistory } from '../client/history-tools';

// Models: a provider per `planner.kind`, given to the worker (docs/models.md).
export { openAIModel, type ModelCall, type ModelProvider } from '../../src/planner/model';
export { scriptedModel } from '../../src/planner/scripted-model';
export type { Scenario, ScriptedProposal, ScriptedTurn } from '../../src/planner/scripted-model';

// Function tools: the implementation a worker runs for a tool declared with `transport: { kind: 'function' }`.
export {
  found,
  foundFailed,
  implementTool,
  notFound,
  NothingSentError,
  pending,
  unknown,
  type FunctionLookup,
  type ToolContext,
  type ToolFunction,
  type ToolImplementation,
} from '../../src/downstream/function-tool';
export { ToolDeclarationError } from '../../src/domain/tool-check';
export type { AttemptCall, LookupCall, Transport } from '../../src/downstream/transport';

// The fenced local outbox: sends of tools on a downstream that takes no fence, claimed in the team's PostgreSQL or
// an SQLite file.
export {
  outboxDdl,
  OUTBOX_TABLE,
  PgOutbox,
  type OutboxRow,
  type PgOutboxOptions,
} from '../../src/downstream/outbox/pg-outbox';
export { SqliteOutbox, sqliteOutboxDdl, type SqliteOutboxOptions } from '../../src/downstream/outbox/sqlite-outbox';
export type { OutboxStore } from '../../src/downstream/outbox/outbox-store';
export type { OutboxWiring } from '../../src/downstream/transports';

// Each service's client is built by a factory a worker may wrap (`downstreamClient`): the HTTP contract only.
export { DownstreamClient, type Downstream, type DownstreamClientOptions } from '../../src/downstream/client';
