/**
 * One agent run on a test stack with an in-process worker whose planner is a real `openai` client (pointed at
 * the scripted test server, or at a real provider), a transcript store of its own, and no workflow cache.
 */
import type OpenAI from 'openai';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { createActivities } from '../../activities';
import { staticIdentitySource } from '../../src/identity/config';
import { activityAttempts } from '../../host/client/history-metrics';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { Stack } from '../../lab/stack';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { DownstreamClient } from '../../src/downstream/client';
import { DISCARD_WORKFLOW_SPANS } from '../../src/observability/tracing';
import { SqliteTranscriptStore } from '../../src/stores/transcript-store';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { taskQueue } from '../helpers/stack';
import { labScriptedModel } from '../../lab/scenarios';

export interface ModelRun {
  readonly result: AgentRunResult;
  readonly ledger: LedgerSnapshot;
  readonly workflowId: string;
  /** Attempts of each planTurn activity, in turn order, from the history. */
  readonly planAttempts: number[];
  readonly handle: WorkflowHandle;
}

export interface ModelRunOptions {
  readonly client: OpenAI;
  /** SQLite file for this run's transcripts. */
  readonly transcriptDb: string;
  readonly defaultModel?: string;
}

/** Start `runInput`, wait for its result, and read the ledger and planTurn attempts. */
export async function runWithModel(
  stack: Stack,
  name: string,
  runInput: AgentRunInput,
  opts: ModelRunOptions,
): Promise<ModelRun> {
  const tq = taskQueue(name);
  const connection = await NativeConnection.connect({ address: stack.server.address });
  const store = new SqliteTranscriptStore(opts.transcriptDb);
  try {
    const worker = await Worker.create({
      connection,
      namespace: stack.server.namespace,
      taskQueue: tq,
      workflowBundle: { codePath: stack.bundlePath },
      activities: createActivities({
        models: [labScriptedModel()],
        services: { wallet: new DownstreamClient({ baseUrl: stack.wallet.url, timeoutMs: 2_000 }) },
        workerIdentity: `test-worker:${process.pid}`,
        authorize: { capabilityKey: stack.capabilityKey },
        // The stack's development issuer (public keys only): the run verifies its principal's token.
        identity: { issuers: staticIdentitySource([stack.identity.config]) },
        openai: {
          client: opts.client,
          transcriptStore: store,
          ...(opts.defaultModel ? { defaultModel: opts.defaultModel } : {}),
        },
      }),
      maxCachedWorkflows: 0,
      ...(stack.dataConverter ? { dataConverter: stack.dataConverter } : {}),
      ...(stack.tracing ? { plugins: [stack.tracing.plugin] } : { sinks: DISCARD_WORKFLOW_SPANS }),
    });
    const workflowId = `${name}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`;
    return await worker.runUntil(async () => {
      const identityToken = await stack.identity.issueFor(
        { purpose: 'start', run: workflowId },
        runInput.principal.id,
        runInput.principal.tenant,
      );
      const handle = await startAgentRun(stack.client, { workflowId, taskQueue: tq, input: runInput, identityToken });
      const result = await handle.result();
      const ledger = await readLedger(handle);
      const planAttempts = activityAttempts(await handle.fetchHistory())
        .filter((a) => a.activityType === 'planTurn')
        .map((a) => a.attempts);
      return { result, ledger, workflowId, planAttempts, handle };
    });
  } finally {
    await store.close();
    await connection.close();
  }
}
