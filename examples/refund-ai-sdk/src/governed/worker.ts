/**
 * The governed agent's worker: the baseline's `Worker.create` (../baseline/worker.ts), with `LedgerloopPlugin`
 * added to its plugin list beside `AiSdkPlugin`. The plugin brings the refund tool's transport (the payments
 * service's HTTP API), the policy, the capability key and the identity issuers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { CapabilitySigningKey, IdentityConfig } from 'ledgerloop';
import { LedgerloopPlugin, type PolicyDocument } from 'ledgerloop/worker';
import { createRefundActivities } from '../baseline/activities';

export interface GovernedRefundWorkerOptions {
  readonly connection: NativeConnection;
  readonly taskQueue: string;
  readonly paymentsUrl: string;
  /** Any AI SDK provider: `createOpenAICompatible(...)`, or the scripted one in tests. */
  readonly modelProvider: ProviderV4;
  /** The key dispatch capabilities are signed with, and the issuers whose tokens name customers and approvers. */
  readonly capabilityKey: CapabilitySigningKey;
  readonly identityIssuers: IdentityConfig;
  readonly extra?: Partial<WorkerOptions>;
}

const policy = JSON.parse(readFileSync(path.join(__dirname, 'policy.json'), 'utf8')) as PolicyDocument;

export function createGovernedRefundWorker(opts: GovernedRefundWorkerOptions): Promise<Worker> {
  return Worker.create({
    ...opts.extra,
    connection: opts.connection,
    taskQueue: opts.taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createRefundActivities(opts.paymentsUrl),
    plugins: [new AiSdkPlugin({ modelProvider: opts.modelProvider }), refundLedgerloopPlugin(opts)],
  });
}

/** The refund's `LedgerloopPlugin`, the same beside any agent loop (the Agents SDK's worker uses it too). */
export function refundLedgerloopPlugin(
  opts: Pick<GovernedRefundWorkerOptions, 'paymentsUrl' | 'capabilityKey' | 'identityIssuers'>,
): LedgerloopPlugin {
  return new LedgerloopPlugin({
    ownWorkflows: true,
    tools: require.resolve('./workflow-tools'),
    services: { payments: opts.paymentsUrl },
    policy,
    capabilityKey: opts.capabilityKey,
    identityIssuers: opts.identityIssuers,
  });
}
