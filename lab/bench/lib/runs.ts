/** Starting and awaiting governed and bare runs of the same shape: N debit turns, then a final answer. */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startAgentRun } from '../../../src/client/runs';
import type { AgentRunInput, AgentRunResult } from '../../../src/domain/run';
import type { BareLoopInput, BareLoopResult } from '../workflows/bare.workflow';
import { PRINCIPAL, TENANT } from './stack';

export type Kind = 'governed' | 'bare';

export interface LoopSpec {
  readonly turns: number;
  /** Governed only: the principal's identity token (the run verifies it before its first model call). */
  readonly identityToken?: string;
  readonly account: string;
  /** Milliseconds from now to the run deadline; default 15 min. */
  readonly deadlineInMs?: number;
  /** Bare only: the stacked-retries client. */
  readonly clientRetries?: 'single' | 'stacked';
  /** Bare only: ablations (see BareLoopInput). */
  readonly upsertsPerCall?: number;
  readonly localActivityPerCall?: boolean;
  /** Governed only: continue as new past this many events (default the workflow's). */
  readonly maxHistoryEvents?: number;
  /** Governed only: what a failed call does to the run (default the workflow's: compensate and stop). */
  readonly onToolFailure?: AgentRunInput['onToolFailure'];
}

export function governedInput(spec: LoopSpec): AgentRunInput {
  return {
    principal: { id: PRINCIPAL, tenant: TENANT },
    goal: `bench: ${spec.turns} debit(s)`,
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario: 'n-debits', vars: { turns: spec.turns, account: spec.account } },
    deadlineAt: new Date(Date.now() + (spec.deadlineInMs ?? 15 * 60_000)).toISOString(),
    budgets: {
      maxTurns: spec.turns + 1,
      maxToolCalls: spec.turns + 1,
      ...(spec.maxHistoryEvents !== undefined ? { maxHistoryEvents: spec.maxHistoryEvents } : {}),
    },
    ...(spec.onToolFailure !== undefined ? { onToolFailure: spec.onToolFailure } : {}),
  };
}

export function bareInput(spec: LoopSpec): BareLoopInput {
  return {
    tenant: TENANT,
    principalId: PRINCIPAL,
    account: spec.account,
    turns: spec.turns,
    clientRetries: spec.clientRetries ?? 'single',
    deadlineAt: new Date(Date.now() + (spec.deadlineInMs ?? 15 * 60_000)).toISOString(),
    ...(spec.upsertsPerCall !== undefined ? { upsertsPerCall: spec.upsertsPerCall } : {}),
    ...(spec.localActivityPerCall !== undefined ? { localActivityPerCall: spec.localActivityPerCall } : {}),
  };
}

export interface Started {
  readonly kind: Kind;
  readonly workflowId: string;
  readonly handle: WorkflowHandle;
}

/** The bench principal's identity token, set by the bench stack; a spec's own token wins. */
let benchIdentityToken: string | undefined;
export function useBenchIdentityToken(token: string): void {
  benchIdentityToken = token;
}

export async function startLoop(
  client: Client,
  kind: Kind,
  taskQueue: string,
  workflowId: string,
  spec: LoopSpec,
): Promise<Started> {
  if (kind === 'governed') {
    const identityToken = spec.identityToken ?? benchIdentityToken;
    const handle = await startAgentRun(client, {
      workflowId,
      taskQueue,
      input: governedInput(spec),
      ...(identityToken ? { identityToken } : {}),
    });
    return { kind, workflowId, handle };
  }
  const handle = await client.workflow.start('bareLoop', { workflowId, taskQueue, args: [bareInput(spec)] });
  return { kind, workflowId, handle };
}

export interface Finished extends Started {
  readonly ok: boolean;
  readonly detail: string;
  readonly result: AgentRunResult | BareLoopResult;
}

/** No benchmark run may take longer: a run stuck on failing workflow tasks must not hang the benchmark. */
export const RUN_TIMEOUT_MS = 10 * 60_000;

/** Awaits the run and checks it did what it should: every debit succeeded and the run completed. */
export async function finish(s: Started, expectedCalls: number, timeoutMs = RUN_TIMEOUT_MS): Promise<Finished> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${s.workflowId} did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  let result: AgentRunResult | BareLoopResult;
  try {
    result = (await Promise.race([s.handle.result(), timeout])) as AgentRunResult | BareLoopResult;
  } finally {
    clearTimeout(timer);
  }
  if (s.kind === 'governed') {
    const r = result as AgentRunResult;
    const ok =
      r.stopReason === 'completed' && r.calls.length === expectedCalls && r.calls.every((c) => c.state === 'SUCCEEDED');
    return { ...s, ok, detail: ok ? 'ok' : `${r.stopReason}: ${r.detail}`, result };
  }
  const r = result as BareLoopResult;
  const ok = r.calls.length === expectedCalls && r.calls.every((c) => c.ok);
  return { ...s, ok, detail: ok ? 'ok' : `bare: ${r.calls.filter((c) => !c.ok).length} failed call(s)`, result };
}

export async function runLoop(
  client: Client,
  kind: Kind,
  taskQueue: string,
  workflowId: string,
  spec: LoopSpec,
): Promise<Finished> {
  return finish(await startLoop(client, kind, taskQueue, workflowId, spec), spec.turns);
}
