/**
 * The generator's reach (issue #39): every point × kind of the catalogue, every path of the coverage rotation and
 * every scenario of the scripted model comes up within a bounded number of cases of any seed, and a cell the
 * generator cannot plan in a scenario has a computed reason.
 */
import { contractOf } from '../../lab/faults/explore';
import { CATALOGUE_CELLS, cellKey, cellReason, FAULT_MENU, NOT_EXPLORED } from '../../lab/faults/explore-faults';
import {
  AIMS,
  generateCases,
  NOT_GENERATED,
  hitsAim,
  SCENARIO_ROTATION,
  scenarioReach,
  scenariosReaching,
  targetOf,
} from '../../lab/faults/explore-generate';
import { CRASH_POINTS, CRASH_POINT_NAMES } from '../../lab/faults/catalog';
import { scenarios } from '../../lab/scenarios';

/** Every aim is taken by every fourth case: within this many cases, each comes up once at least. */
const WITHIN = 4 * AIMS.length;

describe("the generator's reach", () => {
  test('the fault menu has exactly one entry per point × kind of the catalogue, or its reason for none', () => {
    const catalogue = CRASH_POINT_NAMES.flatMap((at) => CRASH_POINTS[at].kinds.map((k) => `${at} ${k}`)).sort();
    expect(CATALOGUE_CELLS.map(cellKey).sort()).toEqual(catalogue);
    const menu = FAULT_MENU.map((e) => cellKey(e.cell));
    expect([...menu, ...Object.keys(NOT_EXPLORED)].sort()).toEqual(catalogue);
    expect(menu.filter((k) => k in NOT_EXPLORED)).toEqual([]);
    for (const reason of Object.values(NOT_EXPLORED)) expect(reason.length).toBeGreaterThan(20);
  });

  test('every scenario of the scripted model is one the generator draws, or is listed with its reason', () => {
    expect([...SCENARIO_ROTATION, ...Object.keys(NOT_GENERATED)].sort()).toEqual(Object.keys(scenarios).sort());
    expect(SCENARIO_ROTATION.filter((s) => s in NOT_GENERATED)).toEqual([]);
    for (const reason of Object.values(NOT_GENERATED)) expect(reason.length).toBeGreaterThan(20);
  });

  test.each([1, 2, 3, 42])(
    `seed %d: every point × kind, and every path of the rotation, is planned within ${WITHIN} cases`,
    (seed) => {
      const cases = generateCases(seed, WITHIN, contractOf);
      const planned = new Set(cases.flatMap((c) => c.faults.map((f) => `${f.at} ${f.do}`)));
      expect(CATALOGUE_CELLS.map(cellKey).filter((k) => !planned.has(k) && !(k in NOT_EXPLORED))).toEqual([]);
      const missed: string[] = [];
      cases.forEach((c, i) => {
        const aim = targetOf(seed, i);
        if (aim !== undefined && !hitsAim(c, aim)) missed.push(`${i + 1}: ${cellKey(aim.cell)} ${aim.label}`);
      });
      expect(missed).toEqual([]);
      const aimed = new Set(
        cases.flatMap((_, i) => {
          const aim = targetOf(seed, i);
          return aim ? [`${cellKey(aim.cell)} ${aim.label}`] : [];
        }),
      );
      expect(aimed.size).toBe(AIMS.length);
    },
  );

  test.each([1, 2, 3])(`seed %d: every scenario comes up within ${4 * SCENARIO_ROTATION.length} cases`, (seed) => {
    const cases = generateCases(seed, 4 * SCENARIO_ROTATION.length, contractOf);
    const seen = new Set(cases.map((c) => c.scenario));
    expect(SCENARIO_ROTATION.filter((s) => !seen.has(s))).toEqual([]);
  });

  test('the cells and scenarios the issue named are generated: compensation pauses and delays, three scenarios', () => {
    const cases = generateCases(1, WITHIN, contractOf);
    const has = (at: string, kind: string) => cases.some((c) => c.faults.some((f) => f.at === at && f.do === kind));
    for (const at of ['compensation.before_send', 'compensation.after_response'])
      for (const kind of ['pause', 'delay']) expect([at, kind, has(at, kind)]).toEqual([at, kind, true]);
    for (const s of ['repeat-debit', 'parallel-debits', 'debit-then-silence'])
      expect([s, cases.some((c) => c.scenario === s)]).toEqual([s, true]);
  });

  test('every cell can fire in some scenario; where it cannot, the reason is the reach check’s own', () => {
    for (const cell of CATALOGUE_CELLS.filter((c) => !(cellKey(c) in NOT_EXPLORED))) {
      expect([cellKey(cell), scenariosReaching(cell, contractOf).length > 0]).toEqual([cellKey(cell), true]);
      for (const s of SCENARIO_ROTATION) {
        const why = scenarioReach(cell, s, contractOf);
        if (why !== undefined) expect(why.length).toBeGreaterThan(10);
      }
    }
  });

  test('the reasons are computed: a saga point has none where a saga runs, and says why where none does', () => {
    const kill = { at: 'compensation.before_send', do: 'kill' } as const;
    // positive control: a scenario whose stop refunds the debit reaches the saga's points
    expect(scenarioReach(kill, 'debit-then-silence', contractOf)).toBeUndefined();
    expect(scenarioReach(kill, 'order-fulfilment', contractOf)).toBeUndefined();
    // a run that completes compensates nothing
    expect(scenarioReach(kill, 'wallet-debit', contractOf)).toMatch(/no saga runs/);
    // a one-debit scenario cannot fill a rate-limit window of one; two debits can
    const rate = { at: 'policy.rate_limit', do: 'rate_limit' } as const;
    expect(scenarioReach(rate, 'wallet-debit', contractOf)).toMatch(/cannot fill a window of 1/);
    expect(scenarioReach(rate, 'parallel-debits', contractOf)).toBeUndefined();
    // the reason is what the menu's own check says about the entry in that context
    const entry = FAULT_MENU.find((e) => cellKey(e.cell) === 'approval.expiry delay')!;
    const ctx = {
      services: ['wallet'] as const,
      approval: false,
      ttlMs: 4_000,
      amountMinor: 100,
      reach: { sends: { wallet: 1 }, debits: 1, turns: 2, compensations: 0 },
      strategy: 'check_receipt' as const,
    };
    expect(cellReason(entry, ctx)).toBe(scenarioReach(entry.cell, 'injected-refund', contractOf));
    expect(cellReason(entry, { ...ctx, approval: true })).toBeUndefined();
  });
});
