/**
 * Activities of the heavier peer (lab/bench/workflows/peer.workflow.ts), written the way Temporal's agent samples
 * write them: one model activity that is sent the whole conversation and the tool definitions and answers with
 * an assistant message, and one plain tool activity that takes a tool name and its arguments as a JSON string
 * and returns the tool's result as a string.
 *
 * `peerModel` is a scripted model over the same `n-debits` turns as the governed planner and `barePlan`; like a
 * real model it reads where the conversation stands from the messages it is sent (one assistant message per turn
 * so far). `peerTool` makes the same downstream call as `bareDebit` (it calls it: one signed debit, the wallet
 * refuses unsigned requests) under the key Temporal's documentation suggests for an idempotent activity: the
 * workflow id and the activity id, stable across the activity's retries. Nothing else: no ledger, validation,
 * authorization or key derivation of its own.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { scenarios } from '../scenarios';
import { createBareActivities, type BareDeps } from './bare.activities';
import type {
  PeerAssistantMessage,
  PeerMessage,
  PeerModelSettings,
  PeerToolDefinition,
} from './workflows/peer.workflow';

export interface PeerModelRequest {
  readonly model: PeerModelSettings;
  readonly messages: readonly PeerMessage[];
  readonly tools: readonly PeerToolDefinition[];
}

export interface PeerModelResponse {
  readonly message: PeerAssistantMessage;
}

export interface PeerToolRequest {
  readonly name: string;
  /** The model's arguments, as the JSON string it produced. */
  readonly arguments: string;
  /** Who the agent acts for: what the tool needs besides the model's arguments. */
  readonly context: { readonly tenant: string; readonly principalId: string };
}

export function createPeerActivities(deps: BareDeps) {
  const { bareDebit } = createBareActivities(deps);

  async function peerModel(req: PeerModelRequest): Promise<PeerModelResponse> {
    const scenario = scenarios[req.model.scenario];
    if (scenario === undefined)
      throw ApplicationFailure.nonRetryable(`no scripted scenario ${req.model.scenario}`, 'Peer.UnknownModel');
    const script = scenario(req.model.vars);
    const turn = script[req.messages.filter((m) => m.role === 'assistant').length];
    if (turn === undefined || !('proposals' in turn)) {
      const results = req.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
      return { message: { role: 'assistant', content: `Done: ${results.length} tool result(s).` } };
    }
    const known = new Set(req.tools.map((t) => t.function.name));
    return {
      message: {
        role: 'assistant',
        content: null,
        tool_calls: turn.proposals
          .filter((p) => known.has(p.name))
          .map((p) => ({
            id: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
            type: 'function' as const,
            function: {
              name: p.name,
              arguments: typeof p.arguments === 'string' ? p.arguments : JSON.stringify(p.arguments),
            },
          })),
      },
    };
  }

  async function peerTool(req: PeerToolRequest): Promise<string> {
    if (req.name !== 'wallet_debit') throw ApplicationFailure.nonRetryable(`no tool ${req.name}`, 'Peer.UnknownTool');
    const args = JSON.parse(req.arguments) as PeerDebitArgs;
    const result = await debitKeyedByActivity(bareDebit, args, req.context);
    return JSON.stringify({ ok: result.ok, receipt: result.receipt ?? null });
  }

  return { peerModel, peerTool };
}

/** A debit as a model writes its arguments. */
export interface PeerDebitArgs {
  readonly account: string;
  readonly amount: { readonly minor: number; readonly currency: string };
}

/**
 * The signed debit a peer's tool activity makes, keyed as Temporal's documentation suggests for an idempotent
 * activity: the workflow id and the activity id, stable across the activity's retries.
 */
export function debitKeyedByActivity(
  bareDebit: ReturnType<typeof createBareActivities>['bareDebit'],
  args: PeerDebitArgs,
  context: PeerToolRequest['context'],
) {
  const info = Context.current().info;
  return bareDebit({
    key: `${info.workflowExecution?.workflowId ?? info.activityType}/${info.activityId}`,
    body: { tenant: context.tenant, account: args.account, amount: args.amount },
    principalId: context.principalId,
    clientRetries: 'single',
  });
}

export type PeerActivities = ReturnType<typeof createPeerActivities>;
