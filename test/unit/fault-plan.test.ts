/** The seeded plan: the same seed gives the same plan and fault schedule; the crash plan reaches the worker intact. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CRASH_POINT_NAMES, CRASH_POINTS } from '../../lab/faults/catalog';
import { compensatingTools, parseCrashPlan, CrashPlanError } from '../../lab/faults/crash-points';
import { bundleFeatures } from '../../lab/faults/lab';
import { crashPlanOf, formatPlan, planProtocol } from '../../lab/faults/plan';
import { createPrng, hash32 } from '../../lab/faults/prng';
import { parseProtocol } from '../../lab/faults/protocol-format';
import { summarizeRequests } from '../../lab/faults/request-log';
import { checkFeatures, FeatureUnavailableError } from '../../lab/faults/runner';

const workshop = (): unknown =>
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'protocols', 'workshop.json'), 'utf8'));

function withRanges(seed: number): unknown {
  return {
    format: 'ledgerloop.fault-protocol/1',
    seed,
    runDeadlineMs: 30_000,
    cases: [
      {
        name: 'ranged',
        scenario: 'wallet-debit',
        input: { principal: 'user:alice', tenant: 'acme', account: 'acct_1', amount: { minor: 100, currency: 'EUR' } },
        faults: [
          { at: 'tool.after_response', do: 'delay', ms: { min: 100, max: 5_000 } },
          { at: 'downstream.before_commit', do: 'error_5xx', occurrence: { min: 1, max: 50 } },
        ],
        expect: [{ metric: 'completed', op: '==', value: true }],
      },
    ],
  };
}

describe('the PRNG', () => {
  test('is deterministic per seed and label', () => {
    const a = createPrng(7, 'x');
    const b = createPrng(7, 'x');
    const draws = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(draws);
    expect(createPrng(8, 'x').next()).not.toBe(draws[0]);
    expect(createPrng(7, 'y').next()).not.toBe(draws[0]);
  });

  test('draws integers inside the range, both ends included', () => {
    const p = createPrng(1, 'range');
    const seen = new Set(Array.from({ length: 400 }, () => p.int(1, 4)));
    expect([...seen].sort()).toEqual([1, 2, 3, 4]);
    expect(() => p.int(3, 2)).toThrow(RangeError);
  });

  test('hash32 is stable across runs (a change would move every plan)', () => {
    expect(hash32('case:lost debit response', 7)).toBe(hash32('case:lost debit response', 7));
    expect(hash32('a')).not.toBe(hash32('b'));
  });
});

describe('planProtocol', () => {
  test('the same file and seed give the same plan, fingerprint and printed plan', () => {
    const a = planProtocol(parseProtocol(workshop()));
    const b = planProtocol(parseProtocol(workshop()));
    expect(b).toEqual(a);
    expect(formatPlan(b)).toBe(formatPlan(a));
  });

  test('ranges are drawn from the seed: same seed same schedule, another seed another', () => {
    const faults = (seed: number) =>
      planProtocol(parseProtocol(withRanges(seed))).cases[0]!.faults.map((f) => [f.ms, f.occurrence]);
    expect(faults(7)).toEqual(faults(7));
    const all = [1, 2, 3, 4, 5].map((s) => JSON.stringify(faults(s)));
    expect(new Set(all).size).toBeGreaterThan(1);
    for (const s of [1, 2, 3]) {
      const [[ms], [, occurrence]] = faults(s) as [[number, number], [number, number]];
      expect(ms).toBeGreaterThanOrEqual(100);
      expect(ms).toBeLessThanOrEqual(5_000);
      expect(occurrence).toBeGreaterThanOrEqual(1);
      expect(occurrence).toBeLessThanOrEqual(50);
    }
  });

  test('defaults are filled in: strategy, limits, services, the seeded account, the server a restart needs', () => {
    const plan = planProtocol(parseProtocol(workshop()));
    expect(plan.limits).toEqual({ model: 3, tool: 3, reconcile: 5, compensation: 5 });
    const restart = plan.cases.find((c) => c.faults.some((f) => f.do === 'restart_server'))!;
    expect(restart.ownServer).toBe(true);
    expect(restart.faults[0]).toMatchObject({ at: 'server.mid_run', ms: 3_000, occurrence: 1, service: 'wallet' });
    expect(plan.cases.filter((c) => c.ownServer)).toHaveLength(1);
    expect(plan.cases[0]).toMatchObject({
      services: ['wallet'],
      accounts: [{ tenant: 'acme', account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' }],
    });
    const stale = plan.cases.find((c) => c.name === 'stale fence')!;
    expect(stale.singleActivitySlot).toBe(true);
  });

  test('in-process faults become the worker crash plan, which the worker parses back', () => {
    const plan = planProtocol(parseProtocol(withRanges(3)));
    const c = plan.cases[0]!;
    expect(c.crashPlan).toMatch(/^tool\.after_response:1:delay:\d+$/);
    expect(parseCrashPlan(c.crashPlan)).toEqual([
      { point: 'tool.after_response', occurrence: 1, action: 'delay', ms: c.faults[0]!.ms },
    ]);
    expect(
      crashPlanOf([{ at: 'approval.expiry', do: 'delay', occurrence: 1, ms: 4000, times: 1, service: 'wallet' }]),
    ).toBe('tool.at_dispatch:1:delay:4000');
  });

  test('a malformed crash plan is a typed error', () => {
    expect(() => parseCrashPlan('tool.nowhere:1:kill:0')).toThrow(CrashPlanError);
    expect(() => parseCrashPlan('tool.before_send:0:kill:0')).toThrow(/bad occurrence/);
    expect(() => parseCrashPlan('tool.before_send:1:explode:0')).toThrow(/action must be/);
    expect(parseCrashPlan('')).toEqual([]);
  });
});

describe('the crash point catalogue', () => {
  test('every point accepts at least one kind and says when it happens', () => {
    for (const name of CRASH_POINT_NAMES) {
      expect(CRASH_POINTS[name].kinds.length).toBeGreaterThan(0);
      expect(CRASH_POINTS[name].moment.length).toBeGreaterThan(20);
    }
  });

  test('compensating tools are found from the tool registry', () => {
    expect([...compensatingTools()].sort()).toEqual(['inventory_release', 'shipping_cancel', 'wallet_refund']);
  });

  test('a compensation crash point on a build without the saga is "not yet available", before anything runs', () => {
    const plan = planProtocol(
      parseProtocol({
        ...(withRanges(1) as object),
        cases: [
          {
            name: 'c',
            scenario: 'order-fulfilment',
            input: { principal: 'user:alice', tenant: 'acme' },
            faults: [{ at: 'compensation.before_send', do: 'kill' }],
            expect: [{ metric: 'completed', op: '==', value: true }],
          },
        ],
      }),
    );
    expect(() => checkFeatures(plan, { bundlePath: 'x', features: new Set() })).toThrow(FeatureUnavailableError);
    expect(() => checkFeatures(plan, { bundlePath: 'x', features: new Set() })).toThrow(
      /cases\[0\]\.faults\[0\]\.at: crash point "compensation\.before_send" is not yet available/,
    );
    expect(() => checkFeatures(plan, { bundlePath: 'x', features: new Set(['saga']) })).not.toThrow();
  });

  test('the saga is detected in the bundle by the events it appends', () => {
    expect(bundleFeatures("ledger.append({ type: 'CompensationStarted', forwardCallId })").has('saga')).toBe(true);
    expect(bundleFeatures("case 'CompensationStarted': return p;").has('saga')).toBe(false);
  });
});

describe('the request log analysis', () => {
  const row = (id: number, key: string, fence: number, outcome: string, hash = 'h1') => ({
    id,
    operationKey: key,
    argumentsHash: hash,
    fence,
    outcome,
  });

  test('a stale request refused by the fence is refused, not admitted', () => {
    const s = summarizeRequests([row(1, 'k', 1002, 'completed'), row(2, 'k', 1001, 'Fence.Stale')]);
    expect(s).toMatchObject({ requests: 2, refused: 1, staleAdmitted: 0, refusedBy: { 'Fence.Stale': 1 } });
  });

  test('a stale request that got through is counted', () => {
    expect(summarizeRequests([row(1, 'k', 1002, 'completed'), row(2, 'k', 1001, 'replayed')]).staleAdmitted).toBe(1);
  });

  test('other arguments under a used key: refused or counted as admitted', () => {
    expect(
      summarizeRequests([row(1, 'k', 1, 'completed'), row(2, 'k', 9, 'Idempotency.ArgumentsMismatch', 'h2')])
        .mismatchedAdmitted,
    ).toBe(0);
    expect(summarizeRequests([row(1, 'k', 1, 'completed'), row(2, 'k', 9, 'completed', 'h2')]).mismatchedAdmitted).toBe(
      1,
    );
  });
});
