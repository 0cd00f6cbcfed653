/** Starting and awaiting governed, bare and peer runs of the same shape: N debit turns, then a final answer. */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startAgentRun } from '../../../host/client/runs';
import type { AgentRunInput, AgentRunResult } from '../../../src/domain/run';
import { functionTool } from '../../../src/planner/tool-schemas';
import { walletDebit } from '../../../src/tools/wallet.tool';
import type { BareLoopInput, BareLoopResult } from '../workflows/bare.workflow';
import type { PeerLoopInput, PeerLoopResult, PeerToolDefinition } from '../workflows/peer.workflow';
import type { AiSdkLoopInput, AiSdkLoopResult } from '../workflows/aisdk.workflow';
import type { AiSdkGovernedLoopInput } from '../workflows/aisdk-governed.workflow';
import { AISDK_MODEL_ID } from './aisdk-model';
import { PRINCIPAL, TENANT } from './principal';

/**
 * `governed`: agentRun. `bare`: bareLoop, governance taken out. The peers, what a team would run instead:
 * `peer`: peerLoop, Temporal's agent-sample shape; `aisdk`: the same agent on `@temporalio/ai-sdk` with plain
 * activities (aiSdkLoop); `aisdk-governed`: that agent with its tool through Ledgerloop's governed tools
 * (aiSdkGovernedLoop).
 */
export type Kind = 'governed' | 'bare' | PeerKind;
/**
 * The peers, each a row beside the bare loop in the latency and throughput sections. A peer is its workflow
 * (lab/bench/workflows/), its bundle (BundleKind in lib/stack.ts), its activity types (LOOP_TYPES in
 * lib/history.ts), its input and result below, its label in report.ts.
 */
export const PEER_KINDS = ['peer', 'aisdk', 'aisdk-governed'] as const;
export type PeerKind = (typeof PEER_KINDS)[number];
export const KINDS: readonly Kind[] = ['governed', 'bare', ...PEER_KINDS];
/** The two kinds the sections that do not measure the peers (history, replay, retries, profile) run. */
export type BaselineKind = Exclude<Kind, PeerKind>;

/** The kinds in the order round (or level) `i` runs them: the first one rotates, the cycle stays the same. */
export function rotation(i: number): Kind[] {
  const k = i % KINDS.length;
  return [...KINDS.slice(k), ...KINDS.slice(0, k)];
}

export interface LoopSpec {
  readonly turns: number;
  /**
   * Governed and governed AI SDK only: the principal's identity token (verified before the first model call);
   * default a start token minted for the run.
   */
  readonly identityToken?: string;
  readonly account: string;
  /** Milliseconds from now to the run deadline; default 15 min. */
  readonly deadlineInMs?: number;
  /** Bare only: the stacked-retries client. */
  readonly clientRetries?: 'single' | 'stacked';
  /** Bare only: ablations (see BareLoopInput). */
  readonly upsertsPerCall?: number;
  readonly localActivityPerCall?: boolean;
  readonly activityAtStart?: boolean;
  readonly localActivityAtStart?: boolean;
  readonly patchesAtStart?: number;
  readonly asyncStepsPerTurn?: number;
  readonly evidenceBytesPerCall?: number;
  /** Governed only: continue as new past this many events (default the workflow's). */
  readonly maxHistoryEvents?: number;
  /** Governed only: what a failed call does to the run (default the workflow's: compensate and stop). */
  readonly onToolFailure?: AgentRunInput['onToolFailure'];
  /**
   * Governed only: start the run without search attributes, static summary or details (the attribution section's
   * `search-attributes` switch); default as `startAgentRun` starts it.
   */
  readonly plainStart?: boolean;
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
    ...(spec.activityAtStart !== undefined ? { activityAtStart: spec.activityAtStart } : {}),
    ...(spec.localActivityAtStart !== undefined ? { localActivityAtStart: spec.localActivityAtStart } : {}),
    ...(spec.patchesAtStart !== undefined ? { patchesAtStart: spec.patchesAtStart } : {}),
    ...(spec.asyncStepsPerTurn !== undefined ? { asyncStepsPerTurn: spec.asyncStepsPerTurn } : {}),
    ...(spec.evidenceBytesPerCall !== undefined ? { evidenceBytesPerCall: spec.evidenceBytesPerCall } : {}),
  };
}

/** The peer agent's instructions: its system message, sent to the model with every turn. */
export const PEER_INSTRUCTIONS =
  'You are a payments assistant for one tenant. Use the tools to do what the user asks, one step at a time, ' +
  'then answer in one sentence with what was done.';

let peerTools: readonly PeerToolDefinition[] | undefined;

/** The peer's input: the same scripted turns, and the debit tool as a chat-completions model is sent it. */
export function peerInput(spec: LoopSpec): PeerLoopInput {
  const tools = (peerTools ??= [functionTool(walletDebit)]);
  return {
    tenant: TENANT,
    principalId: PRINCIPAL,
    instructions: PEER_INSTRUCTIONS,
    prompt: `bench: ${spec.turns} debit(s) from account ${spec.account}`,
    tools,
    model: { scenario: 'n-debits', vars: { turns: spec.turns, account: spec.account } },
  };
}

/** The AI SDK peer's input: the same scripted turns, asked for in the prompt. */
export function aiSdkInput(spec: LoopSpec): AiSdkLoopInput {
  return {
    tenant: TENANT,
    principalId: PRINCIPAL,
    instructions: PEER_INSTRUCTIONS,
    prompt: `bench: ${spec.turns} debit(s) from account ${spec.account}`,
    modelId: AISDK_MODEL_ID,
    maxSteps: spec.turns + 1,
  };
}

/** The governed AI SDK agent's input: the AI SDK peer's, with the principal, its token and the run deadline. */
export function aiSdkGovernedInput(spec: LoopSpec, identityToken: string | undefined): AiSdkGovernedLoopInput {
  const { tenant: _tenant, principalId: _principal, ...agent } = aiSdkInput(spec);
  return {
    ...agent,
    principal: { id: PRINCIPAL, tenant: TENANT },
    identityToken,
    deadlineAt: new Date(Date.now() + (spec.deadlineInMs ?? 15 * 60_000)).toISOString(),
  };
}

/** The kinds whose result is an agent run's (`AgentRunResult`): a typed stop and the ledger's calls. */
const RUN_RESULT_KINDS: readonly Kind[] = ['governed', 'aisdk-governed'];

export interface Started {
  readonly kind: Kind;
  readonly workflowId: string;
  readonly handle: WorkflowHandle;
}

/** Mints the bench principal's start token for a run (each token starts one run), set by the bench stack. */
let benchIdentityToken: ((workflowId: string) => Promise<string>) | undefined;
export function useBenchIdentityToken(mint: (workflowId: string) => Promise<string>): void {
  benchIdentityToken = mint;
}

/** The run's identity token: the spec's, else a start token minted for this run. */
async function tokenFor(spec: LoopSpec, workflowId: string): Promise<string | undefined> {
  return spec.identityToken ?? (await benchIdentityToken?.(workflowId));
}

export async function startLoop(
  client: Client,
  kind: Kind,
  taskQueue: string,
  workflowId: string,
  spec: LoopSpec,
): Promise<Started> {
  if (kind === 'governed') {
    const identityToken = await tokenFor(spec, workflowId);
    const input = governedInput(spec);
    const handle = spec.plainStart
      ? await client.workflow.start('agentRun', {
          workflowId,
          taskQueue,
          args: [identityToken ? { ...input, identityToken } : input],
        })
      : await startAgentRun(client, { workflowId, taskQueue, input, ...(identityToken ? { identityToken } : {}) });
    return { kind, workflowId, handle };
  }
  const start = (type: string, input: unknown) => client.workflow.start(type, { workflowId, taskQueue, args: [input] });
  if (kind === 'aisdk-governed') {
    const input = aiSdkGovernedInput(spec, await tokenFor(spec, workflowId));
    return { kind, workflowId, handle: await start('aiSdkGovernedLoop', input) };
  }
  const handle =
    kind === 'peer'
      ? await start('peerLoop', peerInput(spec))
      : kind === 'aisdk'
        ? await start('aiSdkLoop', aiSdkInput(spec))
        : await start('bareLoop', bareInput(spec));
  return { kind, workflowId, handle };
}

type LoopResult = AgentRunResult | BareLoopResult | PeerLoopResult | AiSdkLoopResult;

export interface Finished extends Started {
  readonly ok: boolean;
  readonly detail: string;
  readonly result: LoopResult;
}

/** No benchmark run may take longer: a run stuck on failing workflow tasks must not hang the benchmark. */
export const RUN_TIMEOUT_MS = 10 * 60_000;

/** Awaits the run and checks it did what it should: every debit succeeded and the run completed. */
export async function finish(s: Started, expectedCalls: number, timeoutMs = RUN_TIMEOUT_MS): Promise<Finished> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${s.workflowId} did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  let result: LoopResult;
  try {
    result = (await Promise.race([s.handle.result(), timeout])) as LoopResult;
  } finally {
    clearTimeout(timer);
  }
  if (RUN_RESULT_KINDS.includes(s.kind)) {
    const r = result as AgentRunResult;
    const ok =
      r.stopReason === 'completed' && r.calls.length === expectedCalls && r.calls.every((c) => c.state === 'SUCCEEDED');
    return { ...s, ok, detail: ok ? 'ok' : `${r.stopReason}: ${r.detail}`, result };
  }
  const r = result as BareLoopResult | PeerLoopResult | AiSdkLoopResult;
  const calls: readonly { ok: boolean }[] = r.calls;
  const ok = calls.length === expectedCalls && calls.every((c) => c.ok);
  const detail = ok
    ? 'ok'
    : `${s.kind}: ${calls.filter((c) => !c.ok).length} failed call(s) of ${calls.length} (${expectedCalls} expected)`;
  return { ...s, ok, detail, result };
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
