/** Builds a Ledgerloop worker: the workflow bundle plus activities wired to their dependencies. */
import os from 'node:os';
import { type NativeConnection, Runtime, Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { connectNative } from '../server/connection-config';
import type { DataConverter } from '@temporalio/common';
import { createActivities } from '../../activities';
import { dataConverterFromEnv } from '../codec/data-converter';
import { workerDataConverter } from '../codec/message-guard';
import { DISCARD_WORKFLOW_SPANS, tracingFromEnv, type Tracing } from '../observability/tracing';
import { DownstreamClient, type Downstream, type DownstreamClientOptions } from '../downstream/client';
import { openAIDepsFromEnv } from '../planner/openai-env';
import type { ModelProvider } from '../planner/model';
import { configValue } from '../config';
import { signingKeyFromEnv, type CapabilitySigningKey } from '../policy/capability-keys';
import { policyStoreFromEnv, type PolicyStore } from '../policy/policy-store';
import type { QuotaStore } from '../policy/quota-store';
import { quotaStoreFromEnv } from '../policy/quota-store-env';
import { bundlerOptionsFor, WORKFLOWS_PATH } from './bundle';
import { loadToolsModule } from './tools-module';
import { DEFAULT_TASK_QUEUE } from '../client/runs';
import type { IdentitySource } from '../identity/config';

// Defined with the client (a client names the queue too, and must not load the worker package for it).
export { DEFAULT_TASK_QUEUE };
/** The worker process serves lab-only strategies only when this variable is exactly "1". */
export const LAB_STRATEGIES_ENV = 'LEDGERLOOP_ALLOW_LAB_STRATEGIES';
/** Exactly "1" allows lab-only strategies; anything else (unset, "true", "0") leaves them refused. */
export const labStrategiesFromEnv = (env: NodeJS.ProcessEnv): boolean =>
  configValue('LEDGERLOOP_ALLOW_LAB_STRATEGIES', env) === true;

export interface LedgerloopWorkerOptions {
  /** host:port; default from the envconfig profile / TEMPORAL_ADDRESS (src/server/connection-config.ts). */
  readonly address?: string;
  readonly namespace?: string;
  readonly taskQueue?: string;
  /** Base URL per downstream service name, e.g. `{ wallet: 'http://127.0.0.1:4100' }`. */
  readonly services: Readonly<Record<string, string>>;
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
   * Serve runs that ask for a lab-only strategy (`blind_retry`, the naive loop that double-charges). Default false:
   * a production worker refuses them at dispatch (Strategy.Forbidden, nothing sent). The worker process sets it
   * only from LEDGERLOOP_ALLOW_LAB_STRATEGIES=1 (the demo and the fault lab spawn their workers with it).
   */
  readonly allowLabStrategies?: boolean;
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
   * A user's tool module: the absolute path of a module exporting `workflowTools` (src/worker/tools-module.ts).
   * The bundle aliases the workflow's registry to it; a prebuilt bundle must be built with the same module
   * (`toolsModule` in src/worker/bundle.ts). Default: the built-in tools.
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
   * Where cross-run rate limits are counted (src/policy/quota-store.ts); default LEDGERLOOP_QUOTA_URL (PostgreSQL)
   * or LEDGERLOOP_QUOTA_DB (SQLite). Every worker of a deployment must share one. None: those limits fail closed.
   */
  readonly quotaStore?: QuotaStore;
}

export const DEFAULT_STICKY_TIMEOUT_MS = 10_000;

export async function createLedgerloopWorker(
  opts: LedgerloopWorkerOptions,
): Promise<{ worker: Worker; connection: NativeConnection; identity: string }> {
  const identity = opts.identity ?? `ledgerloop-worker@${os.hostname()}:${process.pid}`;
  // Before connecting: a tools module that cannot be used fails the start with Tools.Invalid, leaking nothing.
  const tools = opts.tools === undefined ? undefined : loadToolsModule(opts.tools);
  const client = opts.downstreamClient ?? ((_service, options) => new DownstreamClient(options));
  const services = Object.fromEntries(
    Object.entries(opts.services).map(([name, baseUrl]) => [
      name,
      client(name, { baseUrl, ...(opts.downstreamTimeoutMs ? { timeoutMs: opts.downstreamTimeoutMs } : {}) }),
    ]),
  );
  const dataConverter = opts.dataConverter ?? dataConverterFromEnv();
  const capabilityKey = opts.capabilityKey ?? signingKeyFromEnv();
  const tracing = opts.tracing ?? tracingFromEnv('ledgerloop-worker');
  // Built once per worker, only when the environment names a provider: the key never enters workflow input.
  const openai = openAIDepsFromEnv(
    process.env,
    opts.transcriptDbPath ? { transcriptDbPath: opts.transcriptDbPath } : {},
  );
  // TLS, mTLS and API keys come from the envconfig profile and TEMPORAL_* variables (src/server/connection-config.ts).
  const { connection, config } = await connectNative({
    ...(opts.address ? { address: opts.address } : {}),
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
  });
  const namespace = config.namespace;
  const taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
  // Cross-run rate limits are counted in a store the workers own, out of reach of any Temporal client.
  const quotaStore = opts.quotaStore ?? quotaStoreFromEnv();
  const options: WorkerOptions = {
    connection,
    namespace,
    taskQueue,
    identity,
    activities: createActivities({
      services,
      workerIdentity: identity,
      allowLabStrategies: opts.allowLabStrategies === true,
      ...(tools ? { tools } : {}),
      ...(opts.identityIssuers ? { identity: { issuers: opts.identityIssuers } } : {}),
      models: opts.models ?? [],
      planner: opts.plannerLogFile ? { requestLogFile: opts.plannerLogFile } : {},
      ...(openai ? { openai } : {}),
      authorize: {
        policies: opts.policies ?? policyStoreFromEnv(),
        ...(capabilityKey ? { capabilityKey } : {}),
      },
      ...(quotaStore ? { quota: { store: quotaStore } } : {}),
    }),
    ...(opts.workflowBundlePath
      ? { workflowBundle: { codePath: opts.workflowBundlePath } }
      : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: bundlerOptionsFor(opts.tools) }),
    stickyQueueScheduleToStartTimeout: opts.stickyTimeoutMs ?? DEFAULT_STICKY_TIMEOUT_MS,
    ...(opts.deployment
      ? {
          workerDeploymentOptions: {
            useWorkerVersioning: true,
            version: { deploymentName: opts.deployment.name, buildId: opts.deployment.buildId },
            // A run finishes on the code that recorded its history (docs/versioning.md). Set here, not on the
            // workflow: a server refuses a behavior from a worker that is not versioned.
            defaultVersioningBehavior: 'PINNED' as const,
          },
        }
      : {}),
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...(opts.maxConcurrentActivities !== undefined
      ? { maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities }
      : {}),
    // The client's codecs behind the message guard: no signal, update or query payload can fail a workflow task.
    dataConverter: workerDataConverter(dataConverter, {
      onRefused: (r) => Runtime.instance().logger.warn('refused a message payload this worker cannot decode', { ...r }),
    }),
    // Tracing (the SDK's OpenTelemetry plugin) brings its own span sink; without it, spans of a traced bundle drop.
    plugins: [...(tracing ? [tracing.plugin] : []), ...(opts.plugins ?? [])],
    sinks: tracing ? {} : DISCARD_WORKFLOW_SPANS,
  };
  const worker = await Worker.create(options);
  return { worker, connection, identity };
}
