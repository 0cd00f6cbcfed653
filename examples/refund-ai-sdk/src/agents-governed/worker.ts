/**
 * The governed Agents refund agent's worker: `OpenAIAgentsPlugin` (the model activity and the sandbox's bundle
 * changes) beside the same `LedgerloopPlugin` as the AI SDK's governed agent (../governed/worker.ts: the refund
 * tool's transport, the policy, the capability key and the identity issuers).
 */
import type { ModelProvider } from '@openai/agents-core';
import { Worker } from '@temporalio/worker';
import { OpenAIAgentsPlugin } from 'ledgerloop/openai-agents';
import { createRefundActivities } from '../baseline/activities';
import { refundLedgerloopPlugin, type GovernedRefundWorkerOptions } from '../governed/worker';

export interface GovernedAgentsRefundWorkerOptions extends Omit<GovernedRefundWorkerOptions, 'modelProvider'> {
  /** The Agents SDK's provider behind the model activity: `OpenAIProvider`, or the scripted one in tests. */
  readonly modelProvider: ModelProvider;
}

export function createGovernedAgentsRefundWorker(opts: GovernedAgentsRefundWorkerOptions): Promise<Worker> {
  return Worker.create({
    ...opts.extra,
    connection: opts.connection,
    taskQueue: opts.taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createRefundActivities(opts.paymentsUrl),
    plugins: [new OpenAIAgentsPlugin({ modelProvider: opts.modelProvider }), refundLedgerloopPlugin(opts)],
  });
}
