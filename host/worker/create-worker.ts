/**
 * `createWorker`: a Ledgerloop worker for a user's own tools, services, policy and model, in one call.
 *
 *   const { worker } = await createWorker({
 *     tools: require.resolve('./tools/workflow-tools'), // exports workflowTools (ledgerloop/tool-registry)
 *     services: { ticketing: 'http://127.0.0.1:4300' },
 *     policy: ticketingPolicy,                          // a policy document (checked) or a PolicyStore
 *     model: scriptedModel(myScenarios),                // or openAIModel(...), or several
 *     capabilityKey,                                    // the dispatch signing key; its public half is the services'
 *     identityIssuers,                                  // who may start runs (public keys only)
 *     functions: [sendReceipt],                         // function tools' implementations (implementTool)
 *   });
 *   await worker.run();
 *
 * A thin path over `LedgerloopPlugin` (host/worker/plugin.ts): it connects (envconfig profile / TEMPORAL_ADDRESS)
 * and calls `Worker.create` with the plugin. A team with its own `Worker.create` adds the plugin there instead.
 */
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { IdentityConfig, IdentitySource } from '../../src/identity/config';
import type { ModelProvider } from '../../src/planner/model';
import type { CapabilitySigningKey } from '../../src/capability/capability-keys';
import type { PolicyStore } from '../../src/stores/policy-store';
import type { CodecKeyRing } from '../../src/codec/aes-gcm-codec';
import { LedgerloopPlugin, WorkerConfigError, type PolicyDocument } from './plugin';
import { createLedgerloopWorker, type LedgerloopWorkerOptions } from './worker';

export { WorkerConfigError, type PolicyDocument };

export interface CreateWorkerOptions extends Omit<
  LedgerloopWorkerOptions,
  'tools' | 'policies' | 'models' | 'identityIssuers' | 'capabilityKey'
> {
  /** Absolute path of the user's tool module (it exports `workflowTools`); default the built-in tools. */
  readonly tools?: string;
  /** The policy: a document as in a policy file (checked here; an invalid one is `Config.Invalid`) or a store. */
  readonly policy: PolicyStore | PolicyDocument;
  /** The model (or models, one per `planner.kind`) this worker plans with. */
  readonly model: ModelProvider | readonly ModelProvider[];
  /** The Ed25519 key capabilities are signed with. Required: a worker without one could dispatch nothing. */
  readonly capabilityKey: CapabilitySigningKey;
  /** The identity issuers (public keys): a source, or the issuer documents themselves. */
  readonly identityIssuers: IdentitySource | IdentityConfig;
  /** The payload codec keys (`kid:base64,…`); default LEDGERLOOP_CODEC_KEYS. */
  readonly codecKeys?: string | CodecKeyRing;
}

export async function createWorker(
  opts: CreateWorkerOptions,
): Promise<{ worker: Worker; connection: NativeConnection; identity: string; plugin: LedgerloopPlugin }> {
  const plugin = new LedgerloopPlugin({
    services: opts.services,
    policy: opts.policy,
    model: opts.model,
    capabilityKey: opts.capabilityKey,
    identityIssuers: opts.identityIssuers,
    ...(opts.tools !== undefined ? { tools: opts.tools } : {}),
    ...(opts.codecKeys !== undefined ? { codecKeys: opts.codecKeys } : {}),
    ...(opts.downstreamTimeoutMs !== undefined ? { downstreamTimeoutMs: opts.downstreamTimeoutMs } : {}),
    ...(opts.quotaStore !== undefined ? { quotaStore: opts.quotaStore } : {}),
    ...(opts.transcriptDbPath !== undefined ? { transcriptDbPath: opts.transcriptDbPath } : {}),
    ...(opts.plannerLogFile !== undefined ? { plannerLogFile: opts.plannerLogFile } : {}),
    ...(opts.functions !== undefined ? { functions: opts.functions } : {}),
    ...(opts.secrets !== undefined ? { secrets: opts.secrets } : {}),
    ...(opts.wrapTransport !== undefined ? { wrapTransport: opts.wrapTransport } : {}),
    ...(opts.mcp !== undefined ? { mcp: opts.mcp } : {}),
    ...(opts.outbox !== undefined ? { outbox: opts.outbox } : {}),
    ...(opts.downstreamClient !== undefined ? { downstreamClient: opts.downstreamClient } : {}),
  });
  const { identityIssuers: _issuers, capabilityKey: _key, policy: _policy, model: _model, ...rest } = opts;
  const started = await createLedgerloopWorker({ ...rest, plugin });
  return { ...started, plugin };
}
