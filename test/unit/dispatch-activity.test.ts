/**
 * The dispatch activity, one attempt at a time in Temporal's mock activity environment, against a recording
 * downstream: which fence each attempt sends (an ownership epoch, #11.7) and what a retry of a tool without
 * idempotency does (#11.9).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDispatchActivities } from '../../activities/dispatch.activities';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import type { DownstreamClient, SendOptions } from '../../src/downstream/client';
import { Failure } from '../../src/domain/failures';
import { walletDebitRequest } from '../helpers/dispatch-request';

interface Sent {
  readonly path: string;
  readonly options: SendOptions;
}

function recordingDownstream(): { client: DownstreamClient; sent: Sent[]; lookups: string[] } {
  const sent: Sent[] = [];
  const lookups: string[] = [];
  const client = {
    async send(path: string, _body: unknown, options: SendOptions) {
      sent.push({ path, options });
      return { kind: 'ok', status: 201, body: { receipt: 'rcpt_1' }, replayed: false };
    },
    async lookup(key: string) {
      lookups.push(key);
      return { kind: 'not_found', sealed: false };
    },
    async contract() {
      return { idempotencyRetentionMs: 86_400_000 };
    },
  } as unknown as DownstreamClient;
  return { client, sent, lookups };
}

const KEY = walletDebitRequest(1).intent.operationKey;

/** A request the signer re-derives as consistent, with the decision the held default policy makes for it. */
function request(over: Partial<DispatchRequest> = {}): DispatchRequest {
  return walletDebitRequest(1, over);
}

async function attempt(
  info: { attempt: number; scheduledAtMs: number },
  req: DispatchRequest,
  downstream = recordingDownstream(),
) {
  const { dispatchTool } = createDispatchActivities({
    services: { wallet: downstream.client },
    workerIdentity: 'unit',
  });
  const env = new MockActivityEnvironment({
    attempt: info.attempt,
    currentAttemptScheduledTimestampMs: info.scheduledAtMs,
  });
  const outcome = await env.run(dispatchTool, req).then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  return { outcome, ...downstream };
}

describe('the fence is an ownership epoch, not an attempt counter', () => {
  test('a later execution outranks a stale retry of an earlier one (workflow reset, reused workflow id)', async () => {
    const t0 = Date.parse('2026-11-30T10:00:00Z');
    // The earlier execution's third attempt, still in flight; the new owner's first attempt, scheduled later.
    const stale = await attempt({ attempt: 3, scheduledAtMs: t0 }, request());
    const owner = await attempt({ attempt: 1, scheduledAtMs: t0 + 5_000 }, request());
    const staleFence = stale.sent[0]!.options.fence!;
    const ownerFence = owner.sent[0]!.options.fence!;
    expect(ownerFence).toBeGreaterThan(staleFence);
  });

  test('within one dispatch a later attempt outranks an earlier one, and every fence is a safe integer', async () => {
    const t0 = Date.parse('2026-11-30T10:00:00Z');
    const a1 = await attempt({ attempt: 1, scheduledAtMs: t0 }, request());
    const a2 = await attempt({ attempt: 2, scheduledAtMs: t0 + 200 }, request());
    expect(a2.sent[0]!.options.fence!).toBeGreaterThan(a1.sent[0]!.options.fence!);
    // The intent is recorded in the same era as the attempt: retention is measured on the later of the two clocks.
    const far = await attempt(
      { attempt: 7, scheduledAtMs: Date.parse('2200-01-01T00:00:00Z') },
      request({ intentRecordedAt: '2200-01-01T00:00:00.000Z' }),
    );
    expect(Number.isSafeInteger(far.sent[0]!.options.fence)).toBe(true);
  });
});

describe("a tool's idempotency contract decides what a retry may do", () => {
  test('a tool without idempotency is never sent twice: attempt 2 sends nothing and asks for a lookup', async () => {
    const second = await attempt({ attempt: 2, scheduledAtMs: Date.now() }, request({ idempotency: 'none' }));
    expect(second.sent).toHaveLength(0);
    expect(second.outcome.ok).toBe(false);
    expect(!second.outcome.ok && second.outcome.e).toMatchObject({
      type: Failure.DispatchNoResend,
      nonRetryable: true,
      details: [{ attempt: 2 }],
    });
  });

  test('an idempotent tool is resent under the same key', async () => {
    const second = await attempt({ attempt: 2, scheduledAtMs: Date.now() }, request());
    expect(second.sent).toHaveLength(1);
    expect(second.sent[0]!.options.key).toBe(KEY);
  });

  test('a re-dispatch under check_receipt looks the key up before sending again', async () => {
    const again = await attempt(
      { attempt: 1, scheduledAtMs: Date.now() },
      request({ strategy: 'check_receipt', dispatch: 2 }),
    );
    expect(again.lookups).toEqual([KEY]);
  });
});

describe('a lookup that did not seal is not a seal', () => {
  async function reconcile(sealed: boolean, retrySeal: boolean) {
    const downstream = {
      async lookup() {
        return { kind: 'not_found', sealed };
      },
    } as unknown as DownstreamClient;
    const { reconcileCall } = createDispatchActivities({ services: { wallet: downstream }, workerIdentity: 'unit' });
    const req = request();
    return new MockActivityEnvironment({ attempt: 1 })
      .run(reconcileCall, { intent: req.intent, service: 'wallet', seal: true, retrySeal })
      .then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
  }

  test('asked to retry the seal, a downstream that found nothing and did not seal fails the attempt, retryable', async () => {
    const out = await reconcile(false, true);
    expect(out.ok).toBe(false);
    expect(!out.ok && out.e).toMatchObject({ type: Failure.SealRefused, nonRetryable: false });
  });

  test('a seal the downstream confirmed is the answer (the refusal above is not a refusal of everything)', async () => {
    expect(await reconcile(true, true)).toEqual({ ok: true, r: { kind: 'not_found', sealed: true } });
  });

  test('not asked to retry (an operator reads the answer), the unsealed answer is reported as it is', async () => {
    expect(await reconcile(false, false)).toEqual({ ok: true, r: { kind: 'not_found', sealed: false } });
  });
});
