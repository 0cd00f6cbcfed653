/**
 * `LedgerloopPlugin`: Ledgerloop as a Temporal plugin (`@temporalio/plugin`), the convention the SDK's own
 * integrations follow. A team adds it to the `Worker.create` and the `Client` it already has:
 *
 *   const ledgerloop = new LedgerloopPlugin({ tools, services, policy, model, capabilityKey, identityIssuers, codecKeys });
 *   const worker = await Worker.create({ connection, taskQueue: 'ledgerloop', plugins: [ledgerloop] });
 *   const client = new Client({ connection, plugins: [ledgerloop] });
 *
 * On a worker it registers the runtime's activities (wired to the tools, services, policy, model, capability key and
 * identity issuers), the agent-run workflow bundled with the project's tools, and the data converter (the codec
 * behind the message guard). On a client it sets the same codec. A client or worker that would write identity
 * tokens or tool arguments in clear text is warned once, or refused under LEDGERLOOP_CODEC_STRICT.
 *
 * The generic merging (activities appended to the team's own, interceptors) is the SDK's `SimplePlugin`; what
 * Ledgerloop needs beyond it (the bundler's hook, the message guard, the encryption check, which is asynchronous)
 * is done here.
 */
import os from 'node:os';
import { SimplePlugin } from '@temporalio/plugin';
import type { ClientOptions, ClientPlugin } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  Runtime,
  type BundleOptions as SdkBundleOptions,
  type BundlerPlugin,
  type ReplayWorkerOptions,
  type WorkerOptions,
  type WorkerPlugin,
} from '@temporalio/worker';
import type { z } from 'zod';
import { createActivities } from '../../activities';
import type { CodecKeyRing } from '../../src/codec/aes-gcm-codec';
import { dataConverterFromEnv, ledgerloopDataConverter } from '../../src/codec/data-converter';
import { workerDataConverter } from '../../src/codec/message-guard';
import { checkPayloadEncryption, reportInClear } from '../client/token-transport';
import { DownstreamClient, type Downstream, type DownstreamClientOptions } from '../../src/downstream/client';
import {
  parseIdentityConfig,
  staticIdentitySource,
  type IdentityConfig,
  type IdentitySource,
} from '../../src/identity/config';
import type { ModelProvider } from '../../src/planner/model';
import { openAIDepsFromEnv } from '../../src/planner/openai-env';
import type { CapabilitySigningKey } from '../../src/capability/capability-keys';
import { Policy } from '../../src/domain/policy-format';
import { StaticPolicyStore, type PolicyStore } from '../../src/stores/policy-store';
import type { QuotaStore } from '../../src/stores/quota-store';
import { quotaStoreFromEnv } from '../../src/stores/quota-store-env';
import { bundlerOptionsFor, WORKFLOWS_PATH } from './bundle';
import { loadToolsModule } from './tools-module';
import { builtinTools, type ToolRegistry } from '../../src/tools/registry';
import type { AnyTool } from '../../src/domain/tool';
import type { ToolImplementation } from '../../src/downstream/function-tool';
import type { SecretSource } from '../../src/downstream/secrets';
import type { Transport } from '../../src/downstream/transport';
import { checkWiring, type McpWiring, type OutboxWiring } from '../../src/downstream/transports';
import { registerSearchAttributes } from './search-attributes';

/** A policy document as written (the defaults of `Policy` filled in when it is checked). */
export type PolicyDocument = z.input<typeof Policy>;

/** Thrown for options a worker cannot start with; nothing was connected. */
export class WorkerConfigError extends Error {
  override readonly name = 'Config.Invalid';
}

export interface LedgerloopPluginOptions {
  /** Absolute path of the project's tools module (it exports `workflowTools`); default the built-in tools. */
  readonly tools?: string;
  /**
   * Base URL per downstream service name, e.g. `{ booking: 'http://127.0.0.1:4300' }`: a service on Ledgerloop's
   * HTTP contract, or the HTTP API a tool's `transport: { kind: 'http' }` calls.
   */
  readonly services: Readonly<Record<string, string>>;
  /**
   * The function tools' implementations (`implementTool` from `ledgerloop/worker`), one per tool declared with
   * `transport: { kind: 'function' }`. Default none. A function tool without one, or one for no such tool, refuses
   * the worker's start (`Tools.DeclarationInvalid`).
   */
  readonly functions?: readonly ToolImplementation[];
  /**
   * Where the secrets function tools and HTTP APIs name are read from. Default the worker's environment
   * (`process.env`), so a secret never travels through workflow input or history. A missing one refuses the start.
   */
  readonly secrets?: SecretSource;
  /**
   * Decorates every tool's transport (the fault lab's crash points do). It must keep the transport's promises:
   * never throw, and report what happened. Default none.
   */
  readonly wrapTransport?: (tool: AnyTool, transport: Transport) => Transport;
  /**
   * The worker's MCP servers (`mcpServers(...)` from `ledgerloop/mcp`), started and closed by the caller: the
   * transport of every MCP tool. Default none: an MCP tool then refuses the worker's start.
   */
  readonly mcp?: McpWiring;
  /**
   * The fenced local outbox (`new PgOutbox({ pool })` or `new SqliteOutbox({ file })` from `ledgerloop/worker`) and the `http` or `function` tools
   * whose sends it claims under the attempt's fence, for downstreams that take no fence. Default none. A tool it
   * names that the worker does not serve, or a table that does not exist, refuses the start (`Tools.DeclarationInvalid`).
   */
  readonly outbox?: OutboxWiring;
  /** The policy: a document as in a policy file (checked here; an invalid one is `Config.Invalid`) or a store. */
  readonly policy: PolicyStore | PolicyDocument;
  /**
   * The model (or models, one per `planner.kind`) the worker's agent runs plan with. Optional with `ownWorkflows`,
   * where the team's loop calls its own model (e.g. through `AiSdkPlugin`).
   */
  readonly model?: ModelProvider | readonly ModelProvider[];
  /**
   * The worker runs the team's own workflows (its `workflowsPath`), which open governed sessions
   * (`ledgerloop/ai-sdk/workflow`), instead of Ledgerloop's agent-run workflow. Ledgerloop still adds its
   * activities, its bundler options (the tools module, one zod per worker) and the codec. Default false: a
   * Ledgerloop worker serves the agent-run workflow only.
   */
  readonly ownWorkflows?: boolean;
  /** The Ed25519 key capabilities are signed with (the services hold its public half). */
  readonly capabilityKey: CapabilitySigningKey;
  /** The identity issuers (public keys): a source, or the issuer documents themselves. */
  readonly identityIssuers: IdentitySource | IdentityConfig;
  /**
   * The payload codec keys (`kid:base64,…`, as LEDGERLOOP_CODEC_KEYS, or a key ring), for worker and client alike.
   * Default: LEDGERLOOP_CODEC_KEYS, else the converter the worker or client was given; without any, the process
   * warns (or, strict, refuses) at start.
   */
  readonly codecKeys?: string | CodecKeyRing;
  /** Refuse to start without encryption; default LEDGERLOOP_CODEC_STRICT. */
  readonly strict?: boolean;
  /** A prebuilt bundle (`writeWorkflowBundle` with the same tools); default the workflows are bundled at start. */
  readonly workflowBundlePath?: string;
  /** HTTP timeout of downstream calls; must stay below the tool attempt timeout. */
  readonly downstreamTimeoutMs?: number;
  /** Where cross-run rate limits are counted; default LEDGERLOOP_QUOTA_URL / LEDGERLOOP_QUOTA_DB, else none. */
  readonly quotaStore?: QuotaStore;
  /** The model transcript store for `planner.kind: 'openai'` runs (SQLite). */
  readonly transcriptDbPath?: string;
  readonly plannerLogFile?: string;
  /**
   * Builds the client of each service (default: the HTTP contract's `DownstreamClient`). A wrapper may observe or
   * decorate the calls (the fault lab's crash points do); it must keep the contract.
   */
  readonly downstreamClient?: (service: string, options: DownstreamClientOptions) => Downstream;
  /**
   * Register Ledgerloop's search attributes on the worker's namespace at start (through the worker's connection),
   * so a fresh namespace does not refuse the first run. Default true; where they cannot be added the start fails
   * with `Config.SearchAttributesMissing`, naming the command that registers them. A worker given no connection
   * skips it, and one whose credentials may not list them (PERMISSION_DENIED) warns and goes on. Set false when
   * the deployment registers them.
   */
  readonly registerSearchAttributes?: boolean;
}

export const LEDGERLOOP_PLUGIN_NAME = 'ledgerloop';

/**
 * What the runtime's own worker process may leave out (host/worker/worker.ts reads these from the environment and
 * starts without them: services then refuse its calls, runs without issuers are refused). Not for a team's worker.
 */
export interface RuntimePluginOptions extends Omit<
  LedgerloopPluginOptions,
  'capabilityKey' | 'identityIssuers' | 'model'
> {
  readonly capabilityKey?: CapabilitySigningKey;
  readonly identityIssuers?: IdentitySource | IdentityConfig;
  readonly model: readonly ModelProvider[];
}

const RUNTIME = Symbol('ledgerloop runtime worker');

/** The plugin for the runtime's own worker (createLedgerloopWorker), whose keys may come later or not at all. */
export function runtimePlugin(opts: RuntimePluginOptions): LedgerloopPlugin {
  return new LedgerloopPlugin(opts as LedgerloopPluginOptions, RUNTIME);
}

function policyStore(policy: PolicyStore | PolicyDocument): PolicyStore {
  if (typeof (policy as PolicyStore).current === 'function') return policy as PolicyStore;
  const parsed = Policy.safeParse(policy);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new WorkerConfigError(`the policy is invalid at ${first?.path.join('.') || '(root)'}: ${first?.message}`);
  }
  return new StaticPolicyStore(parsed.data);
}

function issuerSource(issuers: IdentitySource | IdentityConfig): IdentitySource {
  if (typeof (issuers as IdentitySource).current === 'function') return issuers as IdentitySource;
  return staticIdentitySource(parseIdentityConfig(issuers));
}

/** Every declaration of a registry (loading each module once). */
function toolsOf(registry: ToolRegistry): AnyTool[] {
  return registry.names().flatMap((name) => registry.get(name) ?? []);
}

/** The identity a worker reports when it was given none (the activities sign with it). */
export function defaultWorkerIdentity(): string {
  return `ledgerloop-worker@${os.hostname()}:${process.pid}`;
}

type WebpackHook = NonNullable<NonNullable<WorkerOptions['bundlerOptions']>['webpackConfigHook']>;

/** Ledgerloop's hook after the team's own (if any). */
function chainHooks(first: WebpackHook | undefined, then: WebpackHook): WebpackHook {
  return first === undefined ? then : (config) => then(first(config));
}

export class LedgerloopPlugin implements WorkerPlugin, ClientPlugin, BundlerPlugin {
  readonly name = LEDGERLOOP_PLUGIN_NAME;
  private readonly policies: PolicyStore;
  private readonly models: readonly ModelProvider[];
  private readonly issuers: IdentitySource | undefined;
  /** The codec from `codecKeys`, built once; undefined when none were given. */
  private readonly codec: DataConverter | undefined;
  private readonly tools: string | undefined;
  private readonly registry: ToolRegistry | undefined;

  /** Checks every option before anything connects: bad input is a `WorkerConfigError` (or the codec's own). */
  constructor(
    private readonly opts: LedgerloopPluginOptions,
    runtime?: typeof RUNTIME,
  ) {
    const team = runtime !== RUNTIME;
    if (opts === null || typeof opts !== 'object') throw new WorkerConfigError('options are required');
    if (team && opts.capabilityKey === undefined) throw new WorkerConfigError('capabilityKey is required');
    if (team && opts.identityIssuers === undefined) throw new WorkerConfigError('identityIssuers is required');
    if (opts.services === null || typeof opts.services !== 'object')
      throw new WorkerConfigError('services is required (a base URL per service name)');
    this.models = Array.isArray(opts.model)
      ? (opts.model as readonly ModelProvider[])
      : opts.model === undefined && opts.ownWorkflows === true
        ? []
        : [opts.model as ModelProvider];
    if (
      this.models.some((m) => m === undefined || m === null) ||
      (team && this.models.length === 0 && opts.ownWorkflows !== true)
    )
      throw new WorkerConfigError('model is required');
    if (opts.policy === undefined) throw new WorkerConfigError('policy is required');
    this.policies = policyStore(opts.policy);
    this.issuers = opts.identityIssuers === undefined ? undefined : issuerSource(opts.identityIssuers);
    // Before connecting: a tools module that cannot be used fails here with Tools.Invalid, leaking nothing.
    this.registry = opts.tools === undefined ? undefined : loadToolsModule(opts.tools);
    this.tools = opts.tools;
    // Every tool this worker serves, against what it was given: a declaration the recovery table cannot follow, a
    // missing implementation, secret or base URL refuses the start here (Tools.DeclarationInvalid), not a run.
    checkWiring(toolsOf(this.registry ?? builtinTools), {
      services: {},
      baseUrls: opts.services,
      ...(opts.functions ? { functions: opts.functions } : {}),
      ...(opts.secrets ? { secrets: opts.secrets } : {}),
      ...(opts.mcp ? { mcp: opts.mcp } : {}),
      ...(opts.outbox ? { outbox: opts.outbox } : {}),
    });
    this.codec =
      opts.codecKeys === undefined
        ? undefined
        : ledgerloopDataConverter(opts.codecKeys, opts.strict === undefined ? {} : { strict: opts.strict });
  }

  /** The converter before the guard: the plugin's keys, else the one given, else the environment's. */
  private converter(given: DataConverter | undefined): DataConverter | undefined {
    if (this.codec === undefined) return given ?? dataConverterFromEnv();
    return { ...given, payloadCodecs: this.codec.payloadCodecs ?? [] };
  }

  private checkOptions() {
    return { ...(this.opts.strict !== undefined ? { strict: this.opts.strict } : {}) };
  }

  configureClient(options: ClientOptions): ClientOptions {
    const dataConverter = this.converter(options.dataConverter);
    // A client's options are configured synchronously, so only "no codec at all" is caught here; a codec that does
    // not encrypt is caught before a token is sent (startAgentRun, host/client/token-transport.ts).
    if ((dataConverter?.payloadCodecs ?? []).length === 0) reportInClear({ role: 'client', ...this.checkOptions() });
    return { ...options, ...(dataConverter ? { dataConverter } : {}) };
  }

  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    const identity = options.identity ?? defaultWorkerIdentity();
    const converter = this.converter(options.dataConverter);
    await checkPayloadEncryption(converter, { role: 'worker', ...this.checkOptions() });
    await this.opts.outbox?.outbox.verify(); // before polling: a missing table refuses the start, not a send
    if (this.opts.registerSearchAttributes !== false && options.connection !== undefined) {
      const namespace = options.namespace ?? 'default';
      if ((await registerSearchAttributes(options.connection.operatorService, namespace)) === 'unreadable')
        Runtime.instance().logger.warn('this worker may not list search attributes; it assumes they are registered', {
          namespace,
        });
    }
    const services = Object.fromEntries(
      Object.entries(this.opts.services).map(([name, baseUrl]) => [
        name,
        (this.opts.downstreamClient ?? ((_service, options) => new DownstreamClient(options)))(name, {
          baseUrl,
          ...(this.opts.downstreamTimeoutMs ? { timeoutMs: this.opts.downstreamTimeoutMs } : {}),
        }),
      ]),
    );
    // Built once per worker, only when the environment names a provider: the key never enters workflow input.
    const openai = openAIDepsFromEnv(
      process.env,
      this.opts.transcriptDbPath ? { transcriptDbPath: this.opts.transcriptDbPath } : {},
    );
    const quotaStore = this.opts.quotaStore ?? quotaStoreFromEnv();
    const activities = createActivities({
      services,
      baseUrls: this.opts.services,
      ...this.transportDeps(),
      workerIdentity: identity,
      ...(this.registry ? { tools: this.registry } : {}),
      ...(this.issuers ? { identity: { issuers: this.issuers } } : {}),
      models: this.models,
      planner: this.opts.plannerLogFile ? { requestLogFile: this.opts.plannerLogFile } : {},
      ...(openai ? { openai } : {}),
      authorize: {
        policies: this.policies,
        ...(this.opts.capabilityKey ? { capabilityKey: this.opts.capabilityKey } : {}),
      },
      ...(quotaStore ? { quota: { store: quotaStore } } : {}),
    });
    // Activities are appended to the team's own and interceptors merged, by the SDK's plugin.
    const merged = new SimplePlugin({ name: this.name, activities }).configureWorker(options);
    return {
      ...merged,
      identity,
      ...this.workflowOptions(options),
      // The codecs behind the message guard: no signal, update or query payload can fail a workflow task.
      dataConverter: workerDataConverter(converter, {
        onRefused: (r) =>
          Runtime.instance().logger.warn('refused a message payload this worker cannot decode', { ...r }),
      }),
    };
  }

  /** What reaches the tools' downstreams, for the dispatch activities. */
  private transportDeps() {
    const o = this.opts;
    return {
      ...(o.functions ? { functions: o.functions } : {}),
      ...(o.secrets ? { secrets: o.secrets } : {}),
      ...(o.wrapTransport ? { wrapTransport: o.wrapTransport } : {}),
      ...(o.mcp ? { mcp: o.mcp } : {}),
      ...(o.outbox ? { outbox: o.outbox } : {}),
      ...(o.downstreamTimeoutMs ? { httpTimeoutMs: o.downstreamTimeoutMs } : {}),
    };
  }

  async configureReplayWorker(options: ReplayWorkerOptions): Promise<ReplayWorkerOptions> {
    const converter = this.converter(options.dataConverter);
    return {
      ...options,
      ...this.workflowOptions(options),
      dataConverter: workerDataConverter(converter),
    };
  }

  /** For `bundleWorkflowCode({ workflowsPath, plugins: [plugin] })`: a prebuilt bundle of the project's tools. */
  configureBundler(options: SdkBundleOptions): SdkBundleOptions {
    const ours = bundlerOptionsFor(this.tools);
    return {
      ...options,
      workflowsPath: options.workflowsPath || WORKFLOWS_PATH,
      webpackConfigHook: chainHooks(options.webpackConfigHook, ours.webpackConfigHook),
      preloadModules: [...(options.preloadModules ?? []), ...ours.preloadModules],
    };
  }

  /** The workflow code: the team's prebuilt bundle, the plugin's, or the agent-run workflow bundled at start. */
  private workflowOptions(
    options: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'>,
  ): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> {
    if (options.workflowBundle !== undefined) return { workflowBundle: options.workflowBundle };
    if (this.opts.workflowBundlePath !== undefined)
      return { workflowBundle: { codePath: this.opts.workflowBundlePath }, workflowsPath: undefined };
    if (this.opts.ownWorkflows === true && options.workflowsPath === undefined)
      throw new WorkerConfigError("ownWorkflows: the worker needs the workflowsPath of the team's workflows");
    if (
      this.opts.ownWorkflows !== true &&
      options.workflowsPath !== undefined &&
      options.workflowsPath !== WORKFLOWS_PATH
    )
      throw new WorkerConfigError(
        `the worker was given workflowsPath ${options.workflowsPath}: a Ledgerloop worker serves the agent-run workflow; run other workflows on a worker of their own task queue`,
      );
    const ours = bundlerOptionsFor(this.tools);
    const theirs = options.bundlerOptions;
    return {
      workflowsPath: this.opts.ownWorkflows === true ? options.workflowsPath : WORKFLOWS_PATH,
      bundlerOptions: {
        ...theirs,
        webpackConfigHook: chainHooks(theirs?.webpackConfigHook, ours.webpackConfigHook),
        preloadModules: [...(theirs?.preloadModules ?? []), ...ours.preloadModules],
      },
    };
  }
}
