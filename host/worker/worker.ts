/** Builds a Ledgerloop worker: the workflow bundle plus activities wired to their dependencies. */
import { type NativeConnection, Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { connectNative } from '../server/connection-config';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv } from '../../src/codec/data-converter';
import { DISCARD_WORKFLOW_SPANS, tracingFromEnv, type Tracing } from '../../src/observability/tracing';
import type { Downstream, DownstreamClientOptions } from '../../src/downstream/client';
import type { ModelProvider } from '../../src/planner/model';
import { signingKeyFromEnv, type CapabilitySigningKey } from '../../src/capability/capability-keys';
import { policyStoreFromEnv, type PolicyStore } from '../../src/stores/policy-store';
import type { QuotaStore } from '../../src/stores/quota-store';
import { defaultWorkerIdentity, runtimePlugin, type LedgerloopPlugin } from './plugin';
import { DEFAULT_TASK_QUEUE } from '../client/runs';
import type { IdentitySource } from '../../src/identity/config';
import type { AnyTool } from '../../src/domain/tool';
import type { ToolImplementation } from '../../src/downstream/function-tool';
import type { SecretSource } from '../../src/downstream/secrets';
import type { Transport } from '../../src/downstream/transport';
import type { McpWiring, OutboxWiring } from '../../src/downstream/transports';

// Defined with the client (a client names the queue too, and must not load the worker package for it).
export { DEFAULT_TASK_QUEUE };

export interface LedgerloopWorkerOptions {
  /** host:port; default from the envconfig profile / TEMPORAL_ADDRESS (host/server/connection-config.ts). */
  readonly address?: string;
  readonly namespace?: string;
  readonly taskQueue?: string;
  /** Base URL per downstream service name (a Ledgerloop service or an HTTP API), e.g. `{ wallet: 'http://…' }`. */
  readonly services: Readonly<Record<string, string>>;
  /** The function tools' implementations (`implementTool`); default none. See `LedgerloopPluginOptions.functions`. */
  readonly functions?: readonly ToolImplementation[];
  /** Where named secrets are read from; default `process.env`. */
  readonly secrets?: SecretSource;
  /** Decorates every tool's transport (the fault lab's crash points); default none. */
  readonly wrapTransport?: (tool: AnyTool, transport: Transport) => Transport;
  /** The worker's MCP servers (`mcpServers` of `ledgerloop/mcp`); default none. See `LedgerloopPluginOptions.mcp`. */
  readonly mcp?: McpWiring;
  /** The fenced local outbox and the tools it serves; default none. See `LedgerloopPluginOptions.outbox`. */
  readonly outbox?: OutboxWiring;
  /** A prebuilt bundle file (fast start); without it the workflows are bundled in process. */
  readonly workflowBundlePath?: string;
  readonly identity?: string;
  readonly plannerLogFile?: string;
  /** 0 forces every workflow task to replay the whole history (used by tests). */
  readonly maxCachedWorkflows?: number;
  /**
   * Activity slots (default the SDK's 100). With 1, a worker busy with one activity holds no activity poll, so
   * a SIGSTOPped worker cannot swallow the retry of its own attempt (the fault protocol's stale-fence case).
   */
  readonly maxConcurrentActivities?: number;
  /** HTTP timeout for downstream calls; must stay below the tool attempt timeout. */
  readonly downstreamTimeoutMs?: number;
  /**
   * The model transcript store for `planner.kind: 'openai'` runs (SQLite; default LEDGERLOOP_TRANSCRIPT_DB or
   * `<repo>/.data/transcripts.db`). The OpenAI client itself is built from OPENAI_API_KEY / OPENAI_BASE_URL.
   */
  readonly transcriptDbPath?: string;
  /**
   * Payload codecs; default from LEDGERLOOP_CODEC_KEYS (src/codec/data-converter.ts). Must equal the client's. The
   * worker puts them behind the message guard (src/codec/message-guard.ts); give the client's converter here.
   */
  readonly dataConverter?: DataConverter;
  /** Tracing; default from LEDGERLOOP_TRACING (src/observability/tracing.ts). */
  readonly tracing?: Tracing;
  /** Where the current policy comes from; default LEDGERLOOP_POLICY_FILE, else the built-in policy. */
  readonly policies?: PolicyStore;
  /**
   * The dispatch side's Ed25519 capability signing key (services hold only its public key); default
   * LEDGERLOOP_CAPABILITY_SIGNING_KEY, else none (verifying services then refuse this worker's calls).
   */
  readonly capabilityKey?: CapabilitySigningKey;
  /**
   * How long a task of a cached run may wait on this worker's sticky queue before the server gives it, with the
   * whole history, to any worker (which then replays the run). Default 10 s (the SDK's). Lower it where workers
   * are killed on purpose (the fault protocol uses 2 s); too low on a busy worker turns load into replays.
   */
  readonly stickyTimeoutMs?: number;
  /**
   * The models this worker plans with (src/planner/model.ts). Default: an OpenAI-compatible model from the
   * environment. The lab's workers add the scripted model with the lab's scenarios (lab/scenarios.ts).
   */
  readonly models?: readonly ModelProvider[];
  /**
   * Builds the client of each downstream service from its name and options. Default `new DownstreamClient(options)`
   * (the HTTP contract). Give a wrapper of it to observe or decorate every send and lookup (tracing, a test double).
   */
  readonly downstreamClient?: (service: string, options: DownstreamClientOptions) => Downstream;
  /**
   * Temporal worker plugins, applied after Ledgerloop's own (tracing): sinks, interceptors or options a team
   * adds to every worker. Default none.
   */
  readonly plugins?: readonly WorkerPlugin[];
  /**
   * A user's tool module: the absolute path of a module exporting `workflowTools` (host/worker/tools-module.ts).
   * The bundle aliases the workflow's registry to it; a prebuilt bundle must be built with the same module
   * (`toolsModule` in host/worker/bundle.ts). Default: the built-in tools.
   */
  readonly tools?: string;
  /** The identity issuers run principals, approvers and operators are verified with; default LEDGERLOOP_IDENTITY_ISSUERS. */
  readonly identityIssuers?: IdentitySource;
  /**
   * The Worker Deployment version this worker serves (docs/versioning.md): runs are pinned to the version they
   * started on. Default: none (an unversioned worker). From LEDGERLOOP_DEPLOYMENT and LEDGERLOOP_BUILD_ID.
   */
  readonly deployment?: { readonly name: string; readonly buildId: string };
  /**
   * Where cross-run rate limits are counted (src/stores/quota-store.ts); default LEDGERLOOP_QUOTA_URL (PostgreSQL)
   * or LEDGERLOOP_QUOTA_DB (SQLite). Every worker of a deployment must share one. None: those limits fail closed.
   */
  readonly quotaStore?: QuotaStore;
}

export const DEFAULT_STICKY_TIMEOUT_MS = 10_000;

export async function createLedgerloopWorker(
  opts: LedgerloopWorkerOptions & {
    /** The plugin, when the caller built and checked it (createWorker); default one from `opts` and the environment. */
    readonly plugin?: LedgerloopPlugin;
  },
): Promise<{ worker: Worker; connection: NativeConnection; identity: string }> {
  const identity = opts.identity ?? defaultWorkerIdentity();
  // Everything is read and checked before connecting: a bad tools module (Tools.Invalid), codec keys or policy
  // fails the start leaking nothing.
  const dataConverter = opts.dataConverter ?? dataConverterFromEnv();
  const plugin =
    opts.plugin ??
    runtimePlugin({
      ...(opts.tools !== undefined ? { tools: opts.tools } : {}),
      services: opts.services,
      policy: opts.policies ?? policyStoreFromEnv(),
      model: opts.models ?? [],
      ...(opts.identityIssuers ? { identityIssuers: opts.identityIssuers } : {}),
      ...optional('capabilityKey', opts.capabilityKey ?? signingKeyFromEnv()),
      ...optional('quotaStore', opts.quotaStore),
      ...optional('downstreamTimeoutMs', opts.downstreamTimeoutMs),
      ...optional('transcriptDbPath', opts.transcriptDbPath),
      ...optional('plannerLogFile', opts.plannerLogFile),
      ...optional('downstreamClient', opts.downstreamClient),
      ...transportOptions(opts),
    });
  const tracing = opts.tracing ?? tracingFromEnv('ledgerloop-worker');
  // TLS, mTLS and API keys come from the envconfig profile and TEMPORAL_* variables (host/server/connection-config.ts).
  const { connection, config } = await connectNative({
    ...(opts.address ? { address: opts.address } : {}),
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
  });
  // The plugin brings the activities, the workflow code and the data converter (host/worker/plugin.ts).
  const options: WorkerOptions = {
    connection,
    namespace: config.namespace,
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    identity,
    ...(dataConverter ? { dataConverter } : {}),
    ...(opts.workflowBundlePath ? { workflowBundle: { codePath: opts.workflowBundlePath } } : {}),
    stickyQueueScheduleToStartTimeout: opts.stickyTimeoutMs ?? DEFAULT_STICKY_TIMEOUT_MS,
    ...versioningOf(opts.deployment),
    ...capacityOf(opts),
    // Tracing (the SDK's OpenTelemetry plugin) brings its own span sink; without it, spans of a traced bundle drop.
    // A team's (or the lab's) plugins come after Ledgerloop's own.
    plugins: [plugin, ...(tracing ? [tracing.plugin] : []), ...(opts.plugins ?? [])],
    sinks: tracing ? {} : DISCARD_WORKFLOW_SPANS,
  };
  try {
    const worker = await Worker.create(options);
    return { worker, connection, identity };
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
}

/** Worker Versioning for a named deployment and build (docs/versioning.md); none without one. */
function versioningOf(deployment: LedgerloopWorkerOptions['deployment']): Partial<WorkerOptions> {
  if (!deployment) return {};
  return {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: deployment.name, buildId: deployment.buildId },
      // A run finishes on the code that recorded its history (docs/versioning.md). Set here, not on the
      // workflow: a server refuses a behavior from a worker that is not versioned.
      defaultVersioningBehavior: 'PINNED' as const,
    },
  };
}

/** The cache and concurrency the caller set; the SDK's defaults for what it left out. */
function capacityOf(opts: LedgerloopWorkerOptions): Partial<WorkerOptions> {
  return {
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...(opts.maxConcurrentActivities !== undefined
      ? { maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities }
      : {}),
  };
}

/** What reaches the tools' downstreams: function implementations, secrets, decorations, MCP servers, the outbox. */
function transportOptions(opts: LedgerloopWorkerOptions) {
  return {
    ...optional('functions', opts.functions),
    ...optional('secrets', opts.secrets),
    ...optional('wrapTransport', opts.wrapTransport),
    ...optional('mcp', opts.mcp),
    ...optional('outbox', opts.outbox),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
