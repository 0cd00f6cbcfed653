/** What the explorer prints: progress per case, the table, every violation, the closing line. */
import {
  EXPLORE_REPORT_FORMAT,
  firedRatio,
  progressLine,
  renderExploreSummary,
  type ExploredCase,
} from '../../lab/faults/explore-report';

const ok: ExploredCase = {
  index: 0,
  name: 'explore 1#1 wallet-debit same_key_replay ds.after_commit=drop#1',
  scenario: 'wallet-debit',
  strategy: 'same_key_replay',
  faults: [{ at: 'downstream.after_commit', do: 'drop_response', occurrence: 1, service: 'wallet' }],
  violations: [],
  metrics: { faults_fired: 1, stop_reason: 'completed', business_effect_count: 1, final_states: 'SUCCEEDED' },
  durationMs: 12_300,
};
const bad: ExploredCase = {
  ...ok,
  index: 1,
  name: 'explore 1#2 wallet-debit same_key_replay ds.after_commit=drop#1 approval.expiry=delay#2',
  violations: [
    { invariant: 'failed_means_no_effect', message: 'lc_1 is FAILED (Approval.Denied) but wallet holds its effect' },
    { invariant: 'standing_effect_settled', message: 'the run stopped tool_failed while lc_1 has an effect' },
  ],
  metrics: { ...ok.metrics, stop_reason: 'tool_failed', final_states: 'FAILED' },
  shrunk: { name: 'x', faults: [], violations: [], attempts: 2, steps: [], minimal: true },
  savedTo: 'protocols/found/explore-seed1-case2.json',
};

test('a progress line names the seed, the count, the verdict and the violating cases so far', () => {
  expect(progressLine(1, 2, 20, bad, 1)).toBe(
    `explore seed 1 [2/20] VIOLATION (bc: 2) in 12.3 s · faults fired 1/1 · 1 violating so far · ${bad.name}`,
  );
  expect(progressLine(1, 1, 20, ok, 0)).toMatch(/\[1\/20\] ok in 12\.3 s/);
});

test('the summary has a row per case, every violation with its reproduction, and the totals', () => {
  const text = renderExploreSummary({
    format: EXPLORE_REPORT_FORMAT,
    seed: 1,
    runsRequested: 3,
    casesRun: 2,
    casesSkipped: 1,
    planFingerprint: 'abc',
    durationMs: 60_000,
    passed: false,
    cases: [ok, bad],
  });
  expect(text).toMatch(/^#\s+scenario\s+strategy\s+faults\s+fired\s+stop\s+effects\s+calls\s+invariants\s+time/);
  expect(text).toMatch(/held/);
  expect(text).toMatch(/VIOLATED bc/);
  expect(text).toContain('[c] failed_means_no_effect: lc_1 is FAILED (Approval.Denied)');
  expect(text).toContain('already minimal: 2 smaller candidate(s) run, none failed');
  expect(text).toContain('reproduce: npx ledgerloop faults protocols/found/explore-seed1-case2.json');
  expect(text).toContain(
    'explore seed 1: 2 of 3 cases run, 1 not started (time budget); 1 violated an invariant; 60.0 s',
  );
});

test('the summary gives the share of planned faults that fired, and names those that never did', () => {
  const missed: ExploredCase = {
    ...ok,
    index: 2,
    faults: [...ok.faults, { at: 'run.cancel', do: 'cancel', occurrence: 1, after: 'ToolResultRecorded' }],
    faultsFired: ok.faults.length,
    missedFaults: ['run.cancel -> cancel (after ToolResultRecorded #1)'],
  };
  const cases = [{ ...ok, faultsFired: ok.faults.length }, missed];
  const planned = cases.reduce((n, c) => n + c.faults.length, 0);
  expect(firedRatio(cases)).toEqual({ planned, fired: planned - 1, ratio: (planned - 1) / planned });
  const text = renderExploreSummary({
    format: EXPLORE_REPORT_FORMAT,
    seed: 1,
    runsRequested: 2,
    casesRun: 2,
    casesSkipped: 0,
    planFingerprint: 'abc',
    durationMs: 1_000,
    passed: true,
    cases,
  });
  expect(text).toContain(
    `faults fired: ${planned - 1} of ${planned} planned (${((100 * (planned - 1)) / planned).toFixed(1)}%); never fired: run.cancel -> cancel x1`,
  );
  expect(progressLine(1, 2, 2, missed, 0)).toContain(`faults fired ${ok.faults.length}/${ok.faults.length + 1}`);
});
