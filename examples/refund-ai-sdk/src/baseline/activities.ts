/**
 * The plain baseline's side effects: Temporal activities against the payments service, as a team writes them on
 * `@temporalio/ai-sdk`. The refund carries an idempotency key the workflow derives; a 4xx is a refusal (no retry);
 * anything else is retried by Temporal under the same key.
 */
import { ApplicationFailure } from '@temporalio/common';

export interface RefundArgs {
  readonly orderId: string;
  readonly amountMinor: number;
  readonly currency: string;
}

export function createRefundActivities(paymentsUrl: string) {
  async function call(path: string, init: RequestInit = {}): Promise<unknown> {
    const res = await fetch(`${paymentsUrl}${path}`, { ...init, signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { error?: string; message?: string };
    if (res.status >= 400 && res.status < 500)
      throw ApplicationFailure.nonRetryable(body.message ?? res.statusText, body.error ?? 'refused');
    if (!res.ok) throw new Error(`payments answered ${res.status}`);
    return body;
  }
  return {
    getOrder: (orderId: string) => call(`/v1/orders/${encodeURIComponent(orderId)}`),
    issueRefund: (args: RefundArgs & { readonly idempotencyKey: string }) =>
      call('/v1/refunds', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': args.idempotencyKey },
        body: JSON.stringify({ orderId: args.orderId, amountMinor: args.amountMinor, currency: args.currency }),
      }),
    findRefund: async (idempotencyKey: string) => {
      const found = (await call(`/v1/refunds?idempotency_key=${encodeURIComponent(idempotencyKey)}`)) as {
        data: unknown[];
      };
      return found.data[0] ?? null;
    },
  };
}

export type RefundActivities = ReturnType<typeof createRefundActivities>;
