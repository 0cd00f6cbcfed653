/**
 * The refund agent on plain `@temporalio/ai-sdk`: the team's own `generateText` loop with `tools` and `stopWhen`;
 * the model call is an activity (`temporalProvider`), each tool's effect a plain activity. The promises, kept by
 * hand: a refund over 100 EUR waits for an approver who is not the customer (an update), one refund per order (an
 * idempotency key derived from the order), and a lost response retried under that key, then looked up by it.
 * What it cannot keep: the approver and the customer are names the caller typed, nothing verifies them.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import { z } from 'zod';
import type { RefundActivities, RefundArgs } from './activities';

export interface RefundRequest {
  readonly customer: string;
  readonly message: string;
}

export interface RefundDecision {
  readonly orderId: string;
  readonly approver: string;
  readonly approve: boolean;
}

export const decideRefund = defineUpdate<string, [RefundDecision]>('decideRefund');
export const pendingRefunds = defineQuery<string[]>('pendingRefunds');

/** Refunds above this (in cents) need a person who is not the customer. */
const APPROVAL_ABOVE_MINOR = 100_00;

const { getOrder, findRefund } = proxyActivities<RefundActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
});
const { issueRefund } = proxyActivities<RefundActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 4, initialInterval: '200ms' },
});

export async function refundAgent(request: RefundRequest): Promise<string> {
  const decisions = new Map<string, boolean | undefined>();
  setHandler(pendingRefunds, () => [...decisions].filter(([, d]) => d === undefined).map(([id]) => id));
  setHandler(decideRefund, (d) => (decisions.set(d.orderId, d.approve), d.approve ? 'approved' : 'denied'), {
    validator: (d) => {
      if (!decisions.has(d.orderId) || decisions.get(d.orderId) !== undefined)
        throw new Error(`no refund of ${d.orderId} is waiting for a decision`);
      if (d.approver === request.customer) throw new Error('the customer cannot approve their own refund');
    },
  });

  async function refund(args: RefundArgs) {
    if (args.amountMinor > APPROVAL_ABOVE_MINOR) {
      decisions.set(args.orderId, undefined);
      if (!(await condition(() => decisions.get(args.orderId) !== undefined, '1 day')))
        return { refused: 'no approver decided within a day' };
      if (!decisions.get(args.orderId)) return { refused: 'the approver denied this refund' };
    }
    // One refund per order: the key is the order, so a retry or a second proposal cannot refund twice.
    const idempotencyKey = `refund-${args.orderId}`;
    try {
      return { refunded: await issueRefund({ ...args, idempotencyKey }) };
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : err;
      if (cause instanceof ApplicationFailure && cause.nonRetryable) return { refused: cause.message };
      // Every attempt went unanswered: ask the payments service what the key did.
      const found = await findRefund(idempotencyKey);
      return found ? { refunded: found } : { unknown: 'the refund may or may not have happened' };
    }
  }

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
      refund_order: tool({
        description: 'Refund part or all of an order (in cents). One refund per order.',
        inputSchema: z.object({ orderId: z.string(), amountMinor: z.number().int().positive(), currency: z.string() }),
        execute: refund,
      }),
    },
  });
  return text;
}
