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
 *   });
 *   await worker.run();
 *
 * The workflow bundle carries the user's declarations (the bundler aliases the workflow's registry to `tools`),
 * so no file of the runtime changes per user. Everything else is `createLedgerloopWorker`'s.
 */
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { z } from 'zod';
import {
  parseIdentityConfig,
  staticIdentitySource,
  type IdentityConfig,
  type IdentitySource,
} from '../identity/config';
import type { ModelProvider } from '../planner/model';
import type { CapabilitySigningKey } from '../policy/capability-keys';
import { Policy } from '../policy/policy-format';
import { StaticPolicyStore, type PolicyStore } from '../policy/policy-store';
import { createLedgerloopWorker, type LedgerloopWorkerOptions } from './worker';

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
}

/** A policy document as written (the defaults of `Policy` filled in when it is checked). */
export type PolicyDocument = z.input<typeof Policy>;

/** Thrown for options a worker cannot start with; nothing was connected. */
export class WorkerConfigError extends Error {
  override readonly name = 'Config.Invalid';
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

export async function createWorker(
  opts: CreateWorkerOptions,
): Promise<{ worker: Worker; connection: NativeConnection; identity: string }> {
  if (opts.capabilityKey === undefined) throw new WorkerConfigError('capabilityKey is required');
  const models = Array.isArray(opts.model) ? (opts.model as readonly ModelProvider[]) : [opts.model as ModelProvider];
  if (models.length === 0) throw new WorkerConfigError('model is required');
  return createLedgerloopWorker({
    ...opts,
    policies: policyStore(opts.policy),
    models,
    identityIssuers: issuerSource(opts.identityIssuers),
  });
}
