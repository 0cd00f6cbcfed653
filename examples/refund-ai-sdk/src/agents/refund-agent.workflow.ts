/**
 * The refund agent on the OpenAI Agents SDK, inside a Temporal workflow: `Agent`, `tool()` and `Runner.run` from
 * `@openai/agents-core` run in the sandbox; the model call is an activity (`ActivityModelProvider` of
 * `ledgerloop/openai-agents/workflow`); each tool's effect is a plain activity, with the same hand-written key as
 * the AI SDK baseline. The tools are not governed yet: no approval, no UNKNOWN, no ledger here
 * (docs/openai-agents.md, "What is not built").
 *
 * Import `@openai/agents-core`, never the `@openai/agents` umbrella: the umbrella brings `@openai/agents-openai`
 * and `openai`, whose module scope builds a `FinalizationRegistry` the sandbox refuses.
 */
import { Agent, Runner, tool } from '@openai/agents-core';
import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import { ActivityModelProvider } from 'ledgerloop/openai-agents/workflow';

/** The tools' side effects, as activities (the worker registers them beside the model activity). */
export interface AgentsRefundActivities {
  getOrder(orderId: string): Promise<unknown>;
  issueRefund(args: {
    orderId: string;
    amountMinor: number;
    currency: string;
    idempotencyKey: string;
  }): Promise<unknown>;
}

const { getOrder, issueRefund } = proxyActivities<AgentsRefundActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 4, initialInterval: '200ms' },
});

export interface AgentsRefundResult {
  readonly finalOutput: string;
  /** The run's items as the Agents SDK reports them (tool calls and their outputs), by type. */
  readonly items: readonly string[];
  readonly modelRequests: number;
}

export async function agentsRefundAgent(message: string): Promise<AgentsRefundResult> {
  const agent = new Agent({
    name: 'refunds',
    instructions: 'You handle refund requests. Look the order up, then refund what the customer asks, once.',
    model: 'refund-model',
    tools: [
      tool({
        name: 'get_order',
        description: 'Look an order up: who paid, how much, what was refunded.',
        parameters: z.object({ orderId: z.string() }),
        execute: async ({ orderId }) => JSON.stringify(await getOrder(orderId)),
      }),
      tool({
        name: 'refund_order',
        description: 'Refund part or all of an order (in cents). One refund per order.',
        parameters: z.object({ orderId: z.string(), amountMinor: z.number().int().positive(), currency: z.string() }),
        execute: async (args) =>
          JSON.stringify(await issueRefund({ ...args, idempotencyKey: `refund-${args.orderId}` })),
      }),
    ],
  });
  const runner = new Runner({ modelProvider: new ActivityModelProvider(), tracingDisabled: true });
  const result = await runner.run(agent, message, { maxTurns: 6 });
  return {
    finalOutput: String(result.finalOutput ?? ''),
    items: result.newItems.map((i) => i.type),
    modelRequests: result.state.usage.requests,
  };
}
