/**
 * The dispatch activity's retention guard and intent time: a same-key resend is only sent while the downstream's
 * declared retention provably covers it, every send carries the intent's recorded time, and the downstream's
 * refusal of an expired intent comes back as a typed, non-retryable failure that the workflow reconciles.
 */
import { walletDebitIntent, walletDebitRequest } from '../helpers/dispatch-request';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDispatchActivities } from '../../activities/dispatch.activities';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { classifyDispatchFailure, Failure } from '../../src/domain/failures';
import type { DownstreamClient, SendOptions, SendOutcome } from '../../src/downstream/client';
import type { ServiceContract } from '../../src/downstream/protocol';

const { intent } = walletDebitIntent(100, { deadlineAt: '2099-01-01T00:00:00.000Z' });

/** A wallet stand-in: records every send, answers `ok` (or what `answer` says), serves `contract`. */
function fakeWallet(contract: () => Promise<ServiceContract>, answer?: SendOutcome) {
  const sends: SendOptions[] = [];
  const client = {
    contract,
    send: (_path: string, _body: unknown, options: SendOptions): Promise<SendOutcome> => {
      sends.push(options);
      return Promise.resolve(answer ?? { kind: 'ok', status: 201, body: { receipt: 'r_1' }, replayed: false });
    },
    lookup: () => Promise.resolve({ kind: 'not_found', sealed: false }),
  } as unknown as DownstreamClient;
  return { client, sends };
}

function request(overrides: Partial<DispatchRequest> = {}): DispatchRequest {
  return walletDebitRequest(100, { intentRecordedAt: new Date(Date.now() - 1_000).toISOString(), ...overrides });
}

async function dispatch(client: DownstreamClient, req: DispatchRequest, attempt: number, scheduledMs = Date.now()) {
  const { dispatchTool } = createDispatchActivities({ services: { wallet: client }, workerIdentity: 'test-worker' });
  const env = new MockActivityEnvironment({
    attempt,
    scheduledTimestampMs: scheduledMs,
    currentAttemptScheduledTimestampMs: Date.now(),
  });
  return env.run(dispatchTool, req);
}

const unreadable = () => Promise.reject(new Error('GET /v1/contract answered 503'));
const declared = (ms: number) => () => Promise.resolve({ service: 'wallet', idempotencyRetentionMs: ms });

describe('the retention guard fails closed', () => {
  it('a same-key resend whose downstream contract cannot be read is not sent: ContractUnreadable, reconciled', async () => {
    const wallet = fakeWallet(unreadable);
    const err = await dispatch(wallet.client, request(), 2).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ type: Failure.ContractUnreadable, nonRetryable: true });
    expect(wallet.sends).toHaveLength(0);
    expect(classifyDispatchFailure(err as never)).toEqual({ state: 'UNKNOWN', cause: 'contract_unreadable' });
  });

  it('a contract declaring no usable retention is unreadable too', async () => {
    for (const bad of [0, -1, Number.NaN, undefined]) {
      const wallet = fakeWallet(() => Promise.resolve({ service: 'wallet', idempotencyRetentionMs: bad } as never));
      await expect(dispatch(wallet.client, request({ dispatch: 2 }), 1)).rejects.toMatchObject({
        type: Failure.ContractUnreadable,
      });
      expect(wallet.sends).toHaveLength(0);
    }
  });

  it('a resend past the declared retention is refused as RetentionExpired, nothing sent', async () => {
    const wallet = fakeWallet(declared(10_000));
    const old = new Date(Date.now() - 9_000).toISOString(); // past 80 % of the window
    await expect(dispatch(wallet.client, request({ intentRecordedAt: old }), 2)).rejects.toMatchObject({
      type: Failure.RetentionExpired,
      nonRetryable: true,
    });
    expect(wallet.sends).toHaveLength(0);
  });

  it('a resend well inside a readable retention is sent, with the intent time of the first attempt', async () => {
    const wallet = fakeWallet(declared(86_400_000));
    const at = new Date(Date.now() - 60_000).toISOString();
    await expect(dispatch(wallet.client, request({ intentRecordedAt: at }), 3)).resolves.toMatchObject({
      outcome: 'succeeded',
    });
    expect(wallet.sends).toEqual([expect.objectContaining({ intentAt: at, key: intent.operationKey })]);
  });

  it('a first attempt needs no contract: it is sent with the recorded intent time', async () => {
    const wallet = fakeWallet(unreadable);
    const at = new Date(Date.now() - 5).toISOString();
    await expect(dispatch(wallet.client, request({ intentRecordedAt: at }), 1)).resolves.toMatchObject({
      outcome: 'succeeded',
    });
    expect(wallet.sends.map((s) => s.intentAt)).toEqual([at]);
  });
});

describe('intent time on every send', () => {
  it('the downstream refusing an expired intent is a non-retryable IntentExpired, classified UNKNOWN for reconciliation', async () => {
    const refused: SendOutcome = { kind: 'rejected', status: 409, code: 'Idempotency.IntentExpired', body: {} };
    const wallet = fakeWallet(declared(86_400_000), refused);
    const err = await dispatch(wallet.client, request(), 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ type: Failure.IntentExpired, nonRetryable: true });
    expect(classifyDispatchFailure(err as never)).toEqual({ state: 'UNKNOWN', cause: 'intent_expired' });
  });
});
