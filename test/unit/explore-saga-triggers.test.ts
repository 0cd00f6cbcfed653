/**
 * Cancels and junk messages at a saga's compensation points (issue #39): the generator triggers a `run.cancel` or
 * a `run.message` fault at `compensation.before_send` / `compensation.after_response` where the case's saga runs,
 * never where none does, and seed 1 reaches each such cell within a bounded number of cases.
 */
import { contractOf } from '../../lab/faults/explore';
import { FAULT_MENU, unreachable, type FaultContext } from '../../lab/faults/explore-faults';
import { generateCases, type GenFault } from '../../lab/faults/explore-generate';
import { createPrng } from '../../lab/faults/prng';

const SAGA_POINTS = ['compensation.before_send', 'compensation.after_response'] as const;
const FAMILIES = ['run.cancel', 'run.message'] as const;
/** Seed 1 first lands the last of the four family × point cells at case 448 (measured); 500 bounds it. */
const WITHIN = 500;

const ctx = (compensations: number): FaultContext => ({
  services: ['wallet'],
  approval: false,
  ttlMs: 4_000,
  amountMinor: 100,
  reach: { sends: { wallet: 2 }, debits: 2, turns: 2, compensations },
  strategy: 'check_receipt',
});
const atSaga = (f: GenFault): boolean => (SAGA_POINTS as readonly string[]).includes(f.after ?? '');
const triggerEntries = FAULT_MENU.filter((e) => (FAMILIES as readonly string[]).includes(e.cell.at));

/** Every trigger a menu entry draws in `c`, over `n` draws of one seeded PRNG. */
const draws = (c: FaultContext, n: number): GenFault[] =>
  triggerEntries.flatMap((e) => {
    const p = createPrng(1, `saga-triggers:${e.cell.at}:${e.cell.do}`);
    return Array.from({ length: n }, () => e.make(p, c));
  });

describe('cancels and junk at compensation points', () => {
  test(`seed 1 plans a cancel and a junk message at each compensation point within ${WITHIN} cases`, () => {
    const cases = generateCases(1, WITHIN, contractOf);
    const planned = new Set(
      cases.flatMap((c) => c.faults.filter((f) => atSaga(f)).map((f) => `${f.at}@${f.after ?? ''}`)),
    );
    const missing = FAMILIES.flatMap((at) => SAGA_POINTS.map((p) => `${at}@${p}`)).filter((k) => !planned.has(k));
    expect(missing).toEqual([]);
  });

  test('every cancel and junk kind is drawn at both compensation points where a saga runs', () => {
    const drawn = new Set(
      draws(ctx(2), 200)
        .filter(atSaga)
        .map((f) => `${f.do}@${f.after ?? ''}`),
    );
    const cells = triggerEntries.flatMap((e) => SAGA_POINTS.map((p) => `${e.cell.do}@${p}`));
    expect(cells).toHaveLength(8);
    expect(cells.filter((k) => !drawn.has(k))).toEqual([]);
  });

  test('positive control: where no saga runs, no trigger lands at a compensation point, and the reason says so', () => {
    expect(draws(ctx(0), 200).filter(atSaga)).toEqual([]);
    const f: GenFault = { at: 'run.cancel', do: 'cancel', after: 'compensation.before_send', occurrence: 1, ms: 0 };
    expect(unreachable(f, ctx(0), [])).toBe('no saga runs for it to land in');
    expect(unreachable({ ...f, occurrence: 2 }, ctx(1), [])).toBe('the saga makes 1 compensating call(s)');
    expect(unreachable(f, ctx(1), [])).toBeUndefined();
  });
});
