/** Shrinking: fewer faults first, then earlier occurrences, until nothing smaller still fails. */
import type { GenCase } from '../../lab/faults/explore-generate';
import { caseSize, shrink, shrinkCandidates } from '../../lab/faults/explore-shrink';

const base: GenCase = {
  name: 'c',
  description: 'd',
  scenario: 'wallet-debit',
  input: { principal: 'user:alice', tenant: 'acme', account: 'acct_1', amount: { minor: 60_000, currency: 'EUR' } },
  strategy: 'same_key_replay',
  faults: [
    { at: 'tool.before_send', do: 'kill', occurrence: 3 },
    { at: 'downstream.after_commit', do: 'drop_response', occurrence: 2, service: 'wallet', times: 2 },
    { at: 'approval.expiry', do: 'delay', occurrence: 2, ms: 5_000 },
  ],
  expect: [{ metric: 'invariant_violations', op: '==', value: 0 }],
};

describe('shrinking', () => {
  test('candidates: each fault removed, then each occurrence earlier, then fewer repeats', () => {
    const c = shrinkCandidates(base);
    expect(c.slice(0, 3).map((x) => x.faults.length)).toEqual([2, 2, 2]);
    expect(c.slice(3).map((x) => x.faults.map((f) => f.occurrence))).toEqual([
      [1, 2, 2],
      [2, 2, 2],
      [3, 1, 2],
      [3, 2, 1],
      [3, 2, 2],
    ]);
    expect(c[c.length - 1]!.faults[1]!.times).toBe(1);
    for (const x of c) expect(caseSize(x) < caseSize(base) || caseSize(x)[1] < caseSize(base)[1]).toBe(true);
  });

  test('finds the smallest failing case: here the lost response on its first request plus the lapsed approval', async () => {
    // The synthetic defect: fails whenever a dropped response and an approval expiry are both present.
    const fails = (c: GenCase): boolean =>
      c.faults.some((f) => f.do === 'drop_response') && c.faults.some((f) => f.at === 'approval.expiry');
    const tried: number[] = [];
    const r = await shrink(
      base,
      ['v0'],
      async (c, n) => {
        tried.push(n);
        return fails(c) ? [`v${n}`] : undefined;
      },
      () => true,
    );
    expect(r.smallest.faults).toEqual([
      { at: 'downstream.after_commit', do: 'drop_response', occurrence: 1, service: 'wallet', times: 1 },
      { at: 'approval.expiry', do: 'delay', occurrence: 1, ms: 5_000 },
    ]);
    expect(r.exhausted).toBe(false);
    expect(r.attempts).toBe(tried.length);
    expect(r.steps[0]).toMatch(/3 -> 2 faults/);
    // the violations reported are the smallest case's own, not the original's
    expect(r.violations).not.toEqual(['v0']);
    expect(r.violations[0]).toMatch(/^v\d+$/);
  });

  test('keeps the original when nothing smaller fails', async () => {
    const r = await shrink(
      base,
      'orig',
      async () => undefined,
      () => true,
    );
    expect(r.smallest).toBe(base);
    expect(r.violations).toBe('orig');
    expect(r.attempts).toBe(shrinkCandidates(base).length);
  });

  test('stops when the budget says no more runs', async () => {
    const r = await shrink(
      base,
      'orig',
      async () => 'still',
      (n) => n < 2,
    );
    expect(r.attempts).toBe(2);
    expect(r.exhausted).toBe(true);
    expect(r.smallest.faults).toHaveLength(1);
  });
});
