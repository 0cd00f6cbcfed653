/**
 * The recovery table (src/domain/recovery.ts), row by row: what an attempt after a possible send may do, and what a
 * lookup's answer settles. Each refusal stands beside the control that shows the same rule letting a call through.
 */
import type { ReconcileResponse } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import {
  afterLookup,
  planResend,
  reconcileRule,
  retryFor,
  RETENTION_SAFETY,
  type LookupAnswer,
  type ResendInput,
} from '../../src/domain/recovery';
import { STRATEGIES } from '../../src/domain/retry-strategies';
import { LEDGERLOOP_PROMISES, type Promises } from '../../src/domain/transport';

const DAY = 86_400_000;
const T0 = Date.parse('2026-12-01T10:00:00Z');

/** A Stripe-like API: dedupes for 24 h, lookup by metadata with a minute's lag, no seal, 10 minutes in flight. */
const STRIPE_LIKE: Promises = {
  keyRetentionMs: DAY,
  lookup: 'by_metadata',
  lookupLagMs: 60_000,
  maxInFlightMs: 600_000,
};

function asker(found: LookupAnswer = { kind: 'not_found', sealed: false }, retention: number | string = DAY) {
  const asked = { lookups: 0, retentions: 0 };
  return {
    asked,
    ask: {
      async lookup() {
        asked.lookups += 1;
        return found;
      },
      async retention() {
        asked.retentions += 1;
        return typeof retention === 'number' ? { ms: retention } : { unreadable: retention };
      },
    },
  };
}

function input(over: Partial<ResendInput> = {}): ResendInput {
  return {
    contract: 'idempotent_by_key',
    promises: STRIPE_LIKE,
    strategy: STRATEGIES.same_key_replay,
    attempt: 2,
    dispatch: 1,
    firstSentAtMs: T0,
    nowMs: T0 + 1_000,
    ...over,
  };
}

describe('an attempt after one that may have sent', () => {
  test('the first attempt of the first dispatch sends without asking anything', async () => {
    const { ask, asked } = asker();
    expect(await planResend(input({ attempt: 1 }), ask)).toEqual({ kind: 'send', resend: false });
    expect(asked).toEqual({ lookups: 0, retentions: 0 });
  });

  test('idempotent_by_key inside its retention resends under the same key', async () => {
    const { ask } = asker();
    expect(await planResend(input(), ask)).toEqual({ kind: 'send', resend: true });
  });

  test('idempotent_by_key past its retention (counted from the first send) is never resent: look it up', async () => {
    const { ask } = asker();
    const late = input({ nowMs: T0 + DAY * RETENTION_SAFETY + 1 });
    expect(await planResend(late, ask)).toMatchObject({
      kind: 'refuse',
      code: Failure.RetentionExpired,
      retryable: false,
    });
    // Control: just inside the safety margin, the same call is resent.
    expect(await planResend(input({ nowMs: T0 + DAY * RETENTION_SAFETY }), ask)).toMatchObject({ kind: 'send' });
  });

  test('a retention the service cannot declare refuses the resend (fail closed)', async () => {
    const { ask } = asker(undefined, 'GET /v1/contract answered 503');
    const out = await planResend(input({ promises: LEDGERLOOP_PROMISES }), ask);
    expect(out).toMatchObject({ kind: 'refuse', code: Failure.ContractUnreadable });
  });

  test('check_receipt looks up first and answers with the effect it finds', async () => {
    const { ask, asked } = asker({ kind: 'found', status: 'completed', receipt: 'pi_1', result: { id: 'pi_1' } });
    const out = await planResend(input({ strategy: STRATEGIES.check_receipt }), ask);
    expect(out).toMatchObject({ kind: 'answered', found: { receipt: 'pi_1' } });
    expect(asked.lookups).toBe(1);
  });

  test('reconcilable_by_lookup without dedupe: not found is no proof, so nothing is resent', async () => {
    const noDedupe: Promises = { lookup: 'by_key', maxInFlightMs: 60_000 };
    const { ask } = asker();
    const out = await planResend(input({ contract: 'reconcilable_by_lookup', promises: noDedupe }), ask);
    expect(out).toMatchObject({ kind: 'refuse', code: Failure.AbsenceUnproven });
    // Control: a downstream that also dedupes the key is resent after the same not-found, inside its retention.
    const dedupes = { ...noDedupe, keyRetentionMs: DAY };
    expect(await planResend(input({ contract: 'reconcilable_by_lookup', promises: dedupes }), ask)).toMatchObject({
      kind: 'send',
    });
  });

  test('a sealed key goes on to the send (the downstream refuses it, typed)', async () => {
    const { ask } = asker({ kind: 'not_found', sealed: true });
    const out = await planResend(input({ contract: 'reconcilable_by_lookup', promises: LEDGERLOOP_PROMISES }), ask);
    expect(out).toMatchObject({ kind: 'send' });
  });

  test('a tool without idempotency is never resent; a re-dispatch the runner proved unsent is a first send', async () => {
    const { ask } = asker();
    expect(await planResend(input({ contract: 'none' }), ask)).toMatchObject({ code: Failure.DispatchNoResend });
    expect(await planResend(input({ contract: 'none', attempt: 1, dispatch: 2 }), ask)).toEqual({
      kind: 'send',
      resend: false,
    });
  });

  test('an unreachable or refused lookup sends nothing', async () => {
    const unreachable = asker({ kind: 'unreachable', reason: 'ECONNREFUSED' });
    expect(await planResend(input({ strategy: STRATEGIES.check_receipt }), unreachable.ask)).toMatchObject({
      code: Failure.DispatchUnavailable,
      retryable: true,
    });
    const refused = asker({ kind: 'refused', code: 'Capability.Invalid', reason: 'no token' });
    expect(await planResend(input({ strategy: STRATEGIES.check_receipt }), refused.ask)).toMatchObject({
      code: Failure.CapabilityRejected,
    });
  });
});

describe('what a lookup answer settles', () => {
  const ctx = { service: 'payments', promises: STRIPE_LIKE, lastSendBoundMs: T0, nowMs: T0 + 1_000 };
  const notFound: ReconcileResponse = { kind: 'not_found', sealed: false };

  test('an unsealed not_found inside the in-flight window is no proof: wait until the window (and the lag) passed', () => {
    expect(afterLookup(notFound, ctx)).toEqual({ kind: 'wait', untilMs: T0 + 600_000 + 60_000 });
  });

  test('after the window the same not_found proves absence', () => {
    expect(afterLookup(notFound, { ...ctx, nowMs: T0 + 660_000 })).toEqual({
      kind: 'failed',
      proof: 'absent_after_window',
    });
  });

  test('without a declared window an unsealed not_found goes to an operator; a sealed one is proof', () => {
    const contract = { ...ctx, promises: LEDGERLOOP_PROMISES };
    expect(afterLookup(notFound, contract)).toMatchObject({ kind: 'operator' });
    expect(afterLookup({ kind: 'not_found', sealed: true }, contract)).toEqual({ kind: 'failed', proof: 'sealed' });
  });

  test('a found effect succeeds and a retained refusal fails, whatever the window', () => {
    expect(afterLookup({ kind: 'found', status: 'completed' }, ctx)).toEqual({ kind: 'succeeded' });
    expect(afterLookup({ kind: 'found', status: 'failed' }, ctx)).toEqual({
      kind: 'failed',
      proof: 'retained_refusal',
    });
  });

  test('a downstream without a lookup is not asked; one that seals is asked to seal', () => {
    expect(reconcileRule({})).toEqual({ lookUp: false, seal: false });
    expect(reconcileRule(STRIPE_LIKE)).toEqual({ lookUp: true, seal: false });
    expect(reconcileRule(LEDGERLOOP_PROMISES)).toEqual({ lookUp: true, seal: true });
  });
});

describe('the run strategy, narrowed by the contract', () => {
  test('none is never dispatched again once it may have sent; the others may be', () => {
    expect(retryFor('same_key_replay', 'none')).toMatchObject({ strategy: 'check_receipt', mayRedispatch: false });
    expect(retryFor('same_key_replay', 'reconcilable_by_lookup')).toMatchObject({
      strategy: 'check_receipt',
      mayRedispatch: true,
    });
    expect(retryFor('same_key_replay', 'idempotent_by_key')).toMatchObject({
      strategy: 'same_key_replay',
      mayRedispatch: true,
    });
  });
});
