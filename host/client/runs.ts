/** Client-side helpers: start an agent run, read its ledger. */
import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { Failure } from '../../src/domain/failures';
import { tooDeep } from '../../src/domain/json-depth';
import { isServedStrategy, strategyNames } from '../../src/domain/retry-strategies';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import type { agentRun } from '../../workflows/agent-run.workflow';
import { ledgerQuery } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { SA } from '../../src/domain/search-attributes';
import { newRunWorkflowId, RunIdError, tenantOfWorkflowId } from './run-ids';
import { guardTokenTransport } from './token-transport';

/** The task queue runs are started on, and workers poll, unless configured (`LEDGERLOOP_TASK_QUEUE`). */
export const DEFAULT_TASK_QUEUE = 'ledgerloop';

export interface StartRunOptions {
  /**
   * Default `<tenant>:run-<time>-<random>` (host/client/run-ids.ts): a frontend that authorizes accepts a starter's
   * run only under its own tenant's prefix. An id that names another tenant than the input's is refused here.
   */
  readonly workflowId?: string;
  readonly taskQueue: string;
  readonly input: AgentRunInput;
  /** Memo fields for the run, e.g. the fault runner's `ledgerloopFaults` marker (lab/faults/workflows/hook.ts). */
  readonly memo?: Record<string, unknown>;
  /**
   * The principal's identity token (compact JWS), when the input does not carry it already: a `start` token for
   * this workflow id (src/identity/purpose.ts), or a function that mints one for the workflow id the run gets (the
   * default id is chosen here). The run verifies it before its first model call; without one (or with a bad one)
   * the run ends `authorization_denied`. A client whose payloads are not encrypted is warned, or, under
   * LEDGERLOOP_CODEC_STRICT, refused (host/client/token-transport.ts): the token goes into the run's history.
   */
  readonly identityToken?: string | ((workflowId: string) => Promise<string>);
}

/** The input names a strategy the runtime does not serve (`check_receipt`, `same_key_replay`): nothing started. */
export class StrategyForbiddenError extends Error {
  override readonly name = 'StrategyForbiddenError';
  readonly type = Failure.StrategyForbidden;
  constructor(readonly strategy: unknown) {
    super(
      `strategy ${String(strategy).slice(0, 100)} is not one of ${strategyNames().join(', ')}; nothing was started`,
    );
  }
}

/**
 * The input nests deeper than `MAX_JSON_DEPTH` (src/domain/json-depth.ts): the worker would refuse it
 * (`Run.InputInvalid`), and the payload converter cannot carry much deeper. Names the field; nothing started.
 */
export class RunInputTooDeepError extends Error {
  override readonly name = 'RunInputTooDeepError';
  readonly type = Failure.RunInputInvalid;
  constructor(readonly detail: string) {
    super(`${detail}; nothing was started`);
  }
}

export async function startAgentRun(
  client: Client,
  opts: StartRunOptions,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentRun>> {
  if (!isServedStrategy(opts.input.strategy)) throw new StrategyForbiddenError(opts.input.strategy);
  const deep = tooDeep(opts.input, 'the run input');
  if (deep !== undefined) throw new RunInputTooDeepError(deep);
  const workflowId = opts.workflowId ?? newRunWorkflowId(opts.input.principal.tenant);
  const named = tenantOfWorkflowId(workflowId);
  if (named !== undefined && named !== opts.input.principal.tenant)
    throw new RunIdError(
      `workflow id ${workflowId} names tenant ${named}, the run's principal is of ${opts.input.principal.tenant}`,
    );
  const token = typeof opts.identityToken === 'function' ? await opts.identityToken(workflowId) : opts.identityToken;
  const input: AgentRunInput = token !== undefined ? { ...opts.input, identityToken: token } : opts.input;
  if (input.identityToken !== undefined)
    await guardTokenTransport(client.options.loadedDataConverter, "the run's identity token");
  return client.workflow.start<typeof agentRun>('agentRun', {
    workflowId,
    taskQueue: opts.taskQueue,
    args: [input],
    ...(opts.memo ? { memo: opts.memo } : {}),
    staticSummary: `agent run for ${input.principal.id} (${input.principal.tenant}) · strategy ${input.strategy}`,
    staticDetails: `goal: ${input.goal}\n\ndeadline: ${input.deadlineAt}`,
    typedSearchAttributes: [
      { key: SA.status, value: 'running' },
      { key: SA.principal, value: input.principal.id },
      { key: SA.tenant, value: input.principal.tenant },
      { key: SA.strategy, value: input.strategy },
      // Set at start, so the run's first publish has nothing to upsert (each upsert is a history event).
      { key: SA.unknownCalls, value: 0 },
      { key: SA.pendingApprovals, value: 0 },
    ],
  });
}

export async function readLedger(handle: WorkflowHandle, upTo?: number): Promise<LedgerSnapshot> {
  return upTo === undefined ? handle.query(ledgerQuery) : handle.query(ledgerQuery, upTo);
}

export type { AgentRunResult };
