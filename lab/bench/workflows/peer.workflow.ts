/**
 * The heavier peer of the benchmarks: the same agent loop as agentRun and bareLoop, written the way Temporal's
 * own agent samples write it. The conversation is kept in workflow state as a list of chat messages (system,
 * user, assistant with its tool calls, tool results); every turn sends the WHOLE conversation and the tool
 * definitions to one model activity, appends the assistant message it returns, runs each tool call as a plain
 * activity with the tool's name and its arguments as the model wrote them (a JSON string), and appends the
 * tool's result (a string). The loop ends when the model answers without a tool call.
 *
 * No ledger, validation, authorization or operation key of its own (the tool activity keys its request by the
 * workflow and activity ids), no search attributes. Same downstream work as bareLoop (one signed debit per call,
 * lab/bench/peer.activities.ts), same retry policy and timeouts. What it carries that bareLoop does not is the
 * conversation: each model request and each model response is recorded in the history, so the bytes a turn adds
 * grow with the turns before it.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { PeerActivities } from '../peer.activities';

export interface PeerToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export interface PeerAssistantMessage {
  readonly role: 'assistant';
  readonly content: string | null;
  readonly tool_calls?: readonly PeerToolCall[];
}

export type PeerMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | PeerAssistantMessage
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

/** A function tool as a chat-completions model is sent it. */
export interface PeerToolDefinition {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description?: string;
    readonly parameters?: Readonly<Record<string, unknown>>;
  };
}

/** Which model the model activity asks: here the scripted scenario and its variables. */
export interface PeerModelSettings {
  readonly scenario: string;
  readonly vars: Readonly<Record<string, unknown>>;
}

export interface PeerLoopInput {
  readonly tenant: string;
  readonly principalId: string;
  /** The agent's instructions (the system message) and the user's request (the first user message). */
  readonly instructions: string;
  readonly prompt: string;
  readonly tools: readonly PeerToolDefinition[];
  readonly model: PeerModelSettings;
}

export interface PeerCallOutcome {
  readonly toolCallId: string;
  readonly name: string;
  readonly ok: boolean;
}

export interface PeerLoopResult {
  readonly output: string;
  readonly turns: number;
  /** Messages in the conversation at the end (system and user included). */
  readonly messages: number;
  readonly calls: readonly PeerCallOutcome[];
}

// The same retry shape and timeouts as bareLoop (and the governed presets): 3 attempts, 200 ms doubling.
const retry = { maximumAttempts: 3, initialInterval: 200, backoffCoefficient: 2, maximumInterval: 2_000 };
const { peerModel } = proxyActivities<PeerActivities>({ startToCloseTimeout: '30s', retry });
const { peerTool } = proxyActivities<PeerActivities>({
  startToCloseTimeout: '10s',
  retry: { ...retry, nonRetryableErrorTypes: ['Bare.Rejected'] },
});

export async function peerLoop(input: PeerLoopInput): Promise<PeerLoopResult> {
  const messages: PeerMessage[] = [
    { role: 'system', content: input.instructions },
    { role: 'user', content: input.prompt },
  ];
  const calls: PeerCallOutcome[] = [];
  for (let turn = 1; ; turn++) {
    const { message } = await peerModel({ model: input.model, messages, tools: input.tools });
    messages.push(message);
    if (!message.tool_calls?.length)
      return { output: message.content ?? '', turns: turn - 1, messages: messages.length, calls };
    for (const call of message.tool_calls) {
      let content: string;
      try {
        content = await peerTool({
          name: call.function.name,
          arguments: call.function.arguments,
          context: { tenant: input.tenant, principalId: input.principalId },
        });
        calls.push({ toolCallId: call.id, name: call.function.name, ok: true });
      } catch (err) {
        // As the samples do: a tool that failed for good is reported to the model, and the loop goes on.
        const cause = err instanceof ActivityFailure ? err.cause : err;
        const reason = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
        content = JSON.stringify({ error: reason });
        calls.push({ toolCallId: call.id, name: call.function.name, ok: false });
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
}
