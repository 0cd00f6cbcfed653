/**
 * The refund agent on `@temporalio/ai-sdk`, governed by Ledgerloop: the same `generateText` loop as the baseline
 * (../baseline/workflows.ts), its model call the same activity. What changed is the refund tool: it is a
 * Ledgerloop declaration (./refund.tools.ts) handed to `governedTools`, so its key is bound to the arguments'
 * hash, it is authorized at dispatch against the verified customer, a refund over 100 EUR waits for a verified
 * approver who is not the customer (the policy, ./policy.json), and a lost response is reconciled by key. The
 * session opens and ends around the loop. The order lookup is a read and stays the team's plain activity.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import { governedSession, governedTools, type SessionResult } from 'ledgerloop/ai-sdk/workflow';
import type { RefundActivities } from '../baseline/activities';

export interface GovernedRefundRequest {
  /** The customer the agent acts for, as their identity token names them. */
  readonly principal: { readonly id: string; readonly tenant: string };
  /** The customer's identity token (verified when the session opens; encrypted by the codec in history). */
  readonly identityToken: string;
  readonly message: string;
  /** The run's one deadline (ISO 8601). */
  readonly deadlineAt: string;
}

const { getOrder } = proxyActivities<RefundActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 3 } });

export async function governedRefundAgent(request: GovernedRefundRequest): Promise<SessionResult<string>> {
  const { principal, identityToken, deadlineAt } = request;
  const session = await governedSession({ principal, identityToken, deadlineAt });
  try {
    const { text } = await generateText({
      model: temporalProvider.languageModel('refund-model'),
      system: 'You handle refund requests. Look the order up, then refund what the customer asks, once.',
      prompt: request.message,
      stopWhen: stepCountIs(6),
      tools: {
        get_order: tool({
          description: 'Look an order up: who paid, how much, what was refunded.',
          inputSchema: z.object({ orderId: z.string() }),
          execute: ({ orderId }) => getOrder(orderId),
        }),
        ...governedTools(session, ['refund_order']),
      },
    });
    return await session.end(text);
  } catch (err) {
    return session.fail(err);
  }
}
