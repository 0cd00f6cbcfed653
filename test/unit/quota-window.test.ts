/** The pure sliding-window logic of the quota store: all-or-nothing, idempotent by id, releasable. */
import { Policy } from '../../src/domain/policy-format';
import { rateLimitsOf } from '../../src/policy/policy-rules';
import {
  CAPACITY_SCOPE,
  MAX_ENTRIES,
  QuotaWindows,
  quotaScopesFor,
  REMEMBER_MIN_MS,
  quotaRequestSchemas,
  type QuotaScopeRequest,
} from '../../src/policy/quota-window';

const tenant = (max: number, perMs = 60_000): QuotaScopeRequest => ({
  scope: 'tenant:acme',
  action: 'wallet.debit',
  max,
  perMs,
});
const principal = (p: string, max: number, perMs = 60_000): QuotaScopeRequest => ({
  scope: `principal:${p}`,
  action: 'wallet.debit',
  max,
  perMs,
});
const T0 = 1_000_000;

describe('sliding windows across runs', () => {
  test('max 2 per 60 s: reservations of different runs get 2 slots, the third waits for the oldest to leave', () => {
    const q = new QuotaWindows();
    expect(q.reserve({ reservationId: 'run-a/c1', scopes: [tenant(2)] }, T0)).toEqual({ ok: true });
    expect(q.reserve({ reservationId: 'run-b/c1', scopes: [tenant(2)] }, T0 + 10_000)).toEqual({ ok: true });
    expect(q.reserve({ reservationId: 'run-c/c1', scopes: [tenant(2)] }, T0 + 20_000)).toEqual({
      ok: false,
      retryAfterMs: 40_000,
      scope: 'tenant:acme',
    });
    // the first leaves the window at T0 + 60 s
    expect(q.reserve({ reservationId: 'run-c/c1', scopes: [tenant(2)] }, T0 + 60_000)).toEqual({ ok: true });
  });

  test('a repeated reservation id answers ok and never counts twice', () => {
    const q = new QuotaWindows();
    expect(q.reserve({ reservationId: 'run-a/c1', scopes: [tenant(2)] }, T0)).toEqual({ ok: true });
    expect(q.reserve({ reservationId: 'run-a/c1', scopes: [tenant(2)] }, T0 + 1)).toEqual({
      ok: true,
      duplicate: true,
    });
    expect(q.reserve({ reservationId: 'run-a/c1', scopes: [tenant(2)] }, T0 + 2)).toEqual({
      ok: true,
      duplicate: true,
    });
    expect(q.reserve({ reservationId: 'run-b/c1', scopes: [tenant(2)] }, T0 + 3)).toEqual({ ok: true });
    expect(q.reserve({ reservationId: 'run-c/c1', scopes: [tenant(2)] }, T0 + 4).ok).toBe(false);
  });

  test('a short window still remembers an admitted id for REMEMBER_MIN_MS', () => {
    const q = new QuotaWindows();
    q.reserve({ reservationId: 'r/1', scopes: [tenant(1, 1_000)] }, T0);
    expect(q.reserve({ reservationId: 'r/1', scopes: [tenant(1, 1_000)] }, T0 + REMEMBER_MIN_MS - 1)).toEqual({
      ok: true,
      duplicate: true,
    });
    expect(q.reserve({ reservationId: 'r/1', scopes: [tenant(1, 1_000)] }, T0 + REMEMBER_MIN_MS)).toEqual({ ok: true });
  });

  test('all or nothing: a full principal window takes no tenant slot', () => {
    const q = new QuotaWindows();
    expect(q.reserve({ reservationId: 'a/1', scopes: [tenant(3), principal('alice', 1)] }, T0).ok).toBe(true);
    expect(q.reserve({ reservationId: 'a/2', scopes: [tenant(3), principal('alice', 1)] }, T0 + 1)).toMatchObject({
      ok: false,
      scope: 'principal:alice',
    });
    // the refused reservation held nothing: bob still finds 2 tenant slots
    expect(q.reserve({ reservationId: 'b/1', scopes: [tenant(3), principal('bob', 5)] }, T0 + 2).ok).toBe(true);
    expect(q.reserve({ reservationId: 'b/2', scopes: [tenant(3), principal('bob', 5)] }, T0 + 3).ok).toBe(true);
    expect(q.reserve({ reservationId: 'b/3', scopes: [tenant(3), principal('bob', 5)] }, T0 + 4)).toMatchObject({
      ok: false,
      scope: 'tenant:acme',
    });
  });

  test('refused on two windows: wait for the later of the two', () => {
    const q = new QuotaWindows();
    q.reserve({ reservationId: 'a/1', scopes: [tenant(1, 60_000), principal('alice', 1, 10_000)] }, T0);
    expect(q.reserve({ reservationId: 'a/2', scopes: [tenant(1, 60_000), principal('alice', 1, 10_000)] }, T0)).toEqual(
      { ok: false, retryAfterMs: 60_000, scope: 'tenant:acme' },
    );
  });

  test('release frees the slot at once and forgets the id; releasing again is a no-op', () => {
    const q = new QuotaWindows();
    q.reserve({ reservationId: 'a/1', scopes: [tenant(1)] }, T0);
    expect(q.reserve({ reservationId: 'b/1', scopes: [tenant(1)] }, T0 + 1).ok).toBe(false);
    expect(q.release('a/1', T0 + 2)).toEqual({ released: true });
    expect(q.release('a/1', T0 + 3)).toEqual({ released: false });
    expect(q.reserve({ reservationId: 'b/1', scopes: [tenant(1)] }, T0 + 4)).toEqual({ ok: true });
  });

  test('actions and principals have windows of their own', () => {
    const q = new QuotaWindows();
    expect(q.reserve({ reservationId: 'a/1', scopes: [principal('alice', 1)] }, T0).ok).toBe(true);
    expect(
      q.reserve({ reservationId: 'a/2', scopes: [{ ...principal('alice', 1), action: 'wallet.refund' }] }, T0).ok,
    ).toBe(true);
    expect(q.reserve({ reservationId: 'b/1', scopes: [principal('bob', 1)] }, T0).ok).toBe(true);
  });

  test('the snapshot carries windows and held ids through continue-as-new (JSON round trip)', () => {
    const q = new QuotaWindows();
    q.reserve({ reservationId: 'a/1', scopes: [tenant(2)] }, T0);
    q.reserve({ reservationId: 'b/1', scopes: [tenant(2)] }, T0 + 1);
    const next = new QuotaWindows(JSON.parse(JSON.stringify(q.snapshot())));
    expect(next.reserve({ reservationId: 'a/1', scopes: [tenant(2)] }, T0 + 2)).toEqual({ ok: true, duplicate: true });
    expect(next.reserve({ reservationId: 'c/1', scopes: [tenant(2)] }, T0 + 3).ok).toBe(false);
    expect(next.usage(T0 + 3)).toEqual([{ scope: 'tenant:acme', action: 'wallet.debit', inWindow: 2 }]);
  });

  test('the serialized state is the snapshot as JSON, and reads back to the same windows', () => {
    const q = new QuotaWindows();
    q.reserve({ reservationId: 'a/1', scopes: [tenant(2), principal('alice', 1)] }, T0);
    q.reserve({ reservationId: '7', scopes: [tenant(2)] }, T0 + 1);
    expect(JSON.parse(q.serialize())).toEqual(q.snapshot());
    const next = new QuotaWindows(JSON.parse(q.serialize()));
    expect(next.serialize()).toBe(q.serialize());
    expect(next.reserve({ reservationId: '7', scopes: [tenant(2)] }, T0 + 2)).toEqual({ ok: true, duplicate: true });
    expect(next.reserve({ reservationId: 'c/1', scopes: [tenant(2)] }, T0 + 3).ok).toBe(false); // control: full
  });

  test('pruning drops expired entries and ids: the state does not grow with time', () => {
    const q = new QuotaWindows();
    for (let i = 0; i < 100; i += 1) q.reserve({ reservationId: `r/${i}`, scopes: [tenant(1_000, 1_000)] }, T0 + i);
    q.prune(T0 + REMEMBER_MIN_MS + 1_000);
    expect(q.snapshot()).toEqual({ windows: {}, reservations: {} });
  });

  test('a full state refuses (fail closed) instead of growing past MAX_ENTRIES', () => {
    const q = new QuotaWindows();
    for (let i = 0; i < MAX_ENTRIES; i += 1)
      q.reserve({ reservationId: `r/${i}`, scopes: [principal(`p${i}`, 1)] }, T0);
    expect(q.reserve({ reservationId: 'x/1', scopes: [principal('x', 1)] }, T0 + 1)).toEqual({
      ok: false,
      retryAfterMs: 59_999,
      scope: CAPACITY_SCOPE,
    });
  });
});

describe('what a rule asks the quota for', () => {
  test('an existing rateLimit (no per) is per principal across runs; per run stays in the run', () => {
    const policy = Policy.parse({
      version: 'p/1',
      rules: [
        { action: 'wallet.debit', rateLimit: { max: 5, perMs: 60_000 } },
        {
          action: 'inventory.reserve',
          rateLimit: [
            { max: 2, perMs: 1_000, per: 'run' },
            { max: 10, perMs: 60_000 },
            { max: 50, perMs: 60_000, per: 'tenant' },
          ],
        },
      ],
    });
    const who = { tenant: 'acme', principalId: 'user:alice' };
    expect(quotaScopesFor(rateLimitsOf(policy.rules[0]!), who, 'wallet.debit')).toEqual([
      { scope: 'principal:user:alice', action: 'wallet.debit', max: 5, perMs: 60_000 },
    ]);
    expect(quotaScopesFor(rateLimitsOf(policy.rules[1]!), who, 'inventory.reserve')).toEqual([
      { scope: 'principal:user:alice', action: 'inventory.reserve', max: 10, perMs: 60_000 },
      { scope: 'tenant:acme', action: 'inventory.reserve', max: 50, perMs: 60_000 },
    ]);
  });

  test('two limits for the same scope are refused', () => {
    const r = Policy.safeParse({
      version: 'p/1',
      rules: [
        {
          action: 'a',
          rateLimit: [
            { max: 1, perMs: 1, per: 'tenant' },
            { max: 2, perMs: 2, per: 'tenant' },
          ],
        },
      ],
    });
    expect(r.success).toBe(false);
  });

  test.each([
    ['no scopes', { reservationId: 'r', scopes: [] }],
    ['an unknown scope kind', { reservationId: 'r', scopes: [{ ...tenant(1), scope: 'run:x' }] }],
    ['the same window twice', { reservationId: 'r', scopes: [tenant(1), tenant(2)] }],
    ['a fractional max', { reservationId: 'r', scopes: [tenant(1.5)] }],
    ['an empty id', { reservationId: '', scopes: [tenant(1)] }],
    ['an unknown field', { reservationId: 'r', scopes: [tenant(1)], extra: 1 }],
  ])('the validator refuses %s', (_name, input) => {
    expect(quotaRequestSchemas().reserve.safeParse(input).success).toBe(false);
  });
});
