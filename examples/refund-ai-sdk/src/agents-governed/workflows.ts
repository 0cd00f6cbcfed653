/**
 * The refund agent on the OpenAI Agents SDK, governed by Ledgerloop: the same `Agent`, `Runner.run` loop and
 * activity model as the ungoverned one (../agents/refund-agent.workflow.ts). What changed is the refund tool: it is
 * the Ledgerloop declaration the AI SDK's governed agent uses (../governed/refund.tools.ts), handed to
 * `governedAgentTools`, so its key is bound to the arguments' hash, it is authorized at dispatch against the
 * verified customer, a refund over 100 EUR waits for a verified approver who is not the customer, and a lost
 * response is reconciled by key. The session opens and ends around the loop. The order lookup is a read and stays
 * the team's plain activity.
 */
import { Agent, Runner, tool } from '@openai/agents-core';
import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import {
  ActivityModelProvider,
  governedAgentTools,
  governedSession,
  type SessionResult,
} from 'ledgerloop/openai-agents/workflow';
import type { RefundActivities } from '../baseline/activities';
import type { GovernedRefundRequest } from '../governed/workflows';

const { getOrder } = proxyActivities<RefundActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 3 } });

export async function governedAgentsRefundAgent(request: GovernedRefundRequest): Promise<SessionResult<string>> {
  const { principal, identityToken, deadlineAt } = request;
  const session = await governedSession({ principal, identityToken, deadlineAt });
  try {
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
        ...governedAgentTools(session, ['refund_order']),
      ],
    });
    const runner = new Runner({ modelProvider: new ActivityModelProvider(), tracingDisabled: true });
    const result = await runner.run(agent, request.message, { maxTurns: 6 });
    return await session.end(String(result.finalOutput ?? ''));
  } catch (err) {
    return session.fail(err);
  }
}
