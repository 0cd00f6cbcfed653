import { classifyDispatchFailure, Failure, type FailureLike } from '../../src/domain/failures';

const activityFailure = (cause: FailureLike): FailureLike => ({ name: 'ActivityFailure', message: 'activity failed', cause });

describe('dispatch failure classification: UNKNOWN unless no effect is proven', () => {
  test.each<[string, FailureLike, string]>([
    ['start-to-close timeout', activityFailure({ name: 'TimeoutFailure', timeoutType: 'START_TO_CLOSE' }), 'UNKNOWN'],
    ['schedule-to-close timeout', activityFailure({ name: 'TimeoutFailure', timeoutType: 'SCHEDULE_TO_CLOSE' }), 'UNKNOWN'],
    ['heartbeat timeout', activityFailure({ name: 'TimeoutFailure', timeoutType: 'HEARTBEAT' }), 'UNKNOWN'],
    ['lost response', activityFailure({ name: 'ApplicationFailure', type: Failure.DispatchResponseLost }), 'UNKNOWN'],
    ['cancelled while in flight', activityFailure({ name: 'CancelledFailure' }), 'UNKNOWN'],
    ['an unrecognised error', activityFailure({ name: 'ApplicationFailure', type: 'TypeError' }), 'UNKNOWN'],
    ['in progress downstream', activityFailure({ name: 'ApplicationFailure', type: Failure.IdempotencyInProgress }), 'UNKNOWN'],
    ['same key, other arguments', activityFailure({ name: 'ApplicationFailure', type: Failure.IdempotencyArgumentsMismatch }), 'FAILED'],
    ['sealed key', activityFailure({ name: 'ApplicationFailure', type: Failure.IdempotencyKeySealed }), 'FAILED'],
    ['stale fence', activityFailure({ name: 'ApplicationFailure', type: Failure.FenceStale }), 'FAILED'],
    ['business rejection', activityFailure({ name: 'ApplicationFailure', type: Failure.DispatchRejected }), 'FAILED'],
    // the last attempt committed nothing, but an earlier attempt's response may have been lost
    ['unavailable after retries', activityFailure({ name: 'ApplicationFailure', type: Failure.DispatchUnavailable }), 'UNKNOWN'],
  ])('%s -> %s', (_name, err, state) => {
    expect(classifyDispatchFailure(err).state).toBe(state);
  });

  test('a timeout is never reported as FAILED', () => {
    const v = classifyDispatchFailure(activityFailure({ name: 'TimeoutFailure', timeoutType: 'START_TO_CLOSE' }));
    expect(v).toEqual({ state: 'UNKNOWN', cause: 'timeout:START_TO_CLOSE' });
  });
});

describe('capabilities at dispatch', () => {
  test('an expired capability asks for a new decision instead of failing the call', () => {
    const v = classifyDispatchFailure({ name: 'ActivityFailure', cause: { name: 'ApplicationFailure', type: 'Authorization.Expired', message: 'expired' } });
    expect(v.state).toBe('REAUTHORIZE');
  });
  test('a capability the downstream refused leaves the outcome UNKNOWN (an earlier attempt may have committed)', () => {
    const v = classifyDispatchFailure({ name: 'ActivityFailure', cause: { name: 'ApplicationFailure', type: 'Capability.Rejected' } });
    expect(v.state).toBe('UNKNOWN');
  });
});

test('a same-key resend refused past the retention window goes to reconciliation (UNKNOWN)', () => {
  const v = classifyDispatchFailure({ name: 'ActivityFailure', cause: { name: 'ApplicationFailure', type: 'Idempotency.RetentionExpired' } });
  expect(v).toEqual({ state: 'UNKNOWN', cause: 'retention_expired' });
});
