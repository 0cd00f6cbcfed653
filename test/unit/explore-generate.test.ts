/** The explorer's generator: deterministic per seed, valid protocol cases, safe strategies only, weighted mix. */
import { contractOf, failureProtocol, planExploration } from '../../lab/faults/explore';
import {
  allowedStrategies,
  explorationProtocol,
  generateCase,
  generateCases,
  faultReachable,
  SCENARIO_ROTATION,
  SCENARIO_TEMPLATES,
} from '../../lab/faults/explore-generate';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { loadProtocol, parseProtocol } from '../../lab/faults/protocol-format';
import { scenarios } from '../../lab/scenarios';
import { builtinTools } from '../../src/tools/registry';

describe('the generated cases', () => {
  test('the same seed gives the same cases (and the same plan fingerprint)', () => {
    const a = generateCases(1, 30, contractOf);
    const b = generateCases(1, 30, contractOf);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(planExploration(1, a).fingerprint).toBe(planExploration(1, b).fingerprint);
  });

  test('different seeds give different cases', () => {
    const a = JSON.stringify(generateCases(1, 20, contractOf).map(({ name: _n, description: _d, ...c }) => c));
    const b = JSON.stringify(generateCases(2, 20, contractOf).map(({ name: _n, description: _d, ...c }) => c));
    expect(a).not.toBe(b);
    expect(planExploration(1, generateCases(1, 20, contractOf)).fingerprint).not.toBe(
      planExploration(2, generateCases(2, 20, contractOf)).fingerprint,
    );
  });

  test('--runs 20 is the first 20 cases of --runs 200', () => {
    expect(generateCases(7, 200, contractOf).slice(0, 20)).toEqual(generateCases(7, 20, contractOf));
  });

  test('generation reads no clock and no Math.random', () => {
    const random = jest.spyOn(Math, 'random').mockImplementation(() => {
      throw new Error('Math.random used');
    });
    const now = jest.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('Date.now used');
    });
    try {
      expect(() => generateCases(3, 50, contractOf)).not.toThrow();
    } finally {
      random.mockRestore();
      now.mockRestore();
    }
  });

  test.each([1, 2, 3, 42, 0xffff_ffff])(
    'seed %d: 200 cases are a valid protocol, safe strategies, one to three faults drawn (each with what it needs)',
    (seed) => {
      const cases = generateCases(seed, 200, contractOf);
      expect(() => parseProtocol(explorationProtocol(seed, cases))).not.toThrow();
      for (const c of cases) {
        expect(['same_key_replay', 'check_receipt']).toContain(c.strategy);
        expect(c.faults.length).toBeGreaterThanOrEqual(1);
        // one to three drawn, each with the faults it needs beside it (a refused seal needs a call to seal)
        expect(c.faults.length).toBeLessThanOrEqual(6);
        c.faults.forEach((_, i) => expect(faultReachable(c, i)).toBe(true));
        expect(c.expect).toContainEqual({ metric: 'invariant_violations', op: '==', value: 0 });
      }
    },
  );

  test('every scenario comes up, and every scenario is one the scripted model knows', () => {
    for (const s of SCENARIO_ROTATION) expect(Object.keys(scenarios)).toContain(s);
    const seen = new Set(generateCases(5, 4 * SCENARIO_ROTATION.length, contractOf).map((c) => c.scenario));
    expect([...seen].sort()).toEqual([...SCENARIO_ROTATION].sort());
  });

  test('the tools a scenario template names are registered tools', () => {
    for (const t of Object.values(SCENARIO_TEMPLATES))
      for (const name of t.tools) expect(builtinTools.get(name)).toBeDefined();
  });

  test('strategies follow the tool contracts; blind_retry never', () => {
    expect(allowedStrategies(['idempotent_by_key'])).toEqual(['same_key_replay', 'check_receipt']);
    expect(allowedStrategies(['idempotent_by_key', 'reconcilable_by_lookup'])).toEqual(['check_receipt']);
    expect(allowedStrategies(['none'])).toEqual(['check_receipt']);
    const lookupOnly = generateCases(9, 40, () => 'reconcilable_by_lookup');
    expect(new Set(lookupOnly.map((c) => c.strategy))).toEqual(new Set(['check_receipt']));
  });

  test('the mix is weighted toward lost responses after commit, kills after the send, short approvals and policy publications', () => {
    const faults = generateCases(1, 400, contractOf).flatMap((c) => c.faults);
    const share = (pred: (f: (typeof faults)[number]) => boolean): number => faults.filter(pred).length / faults.length;
    const afterCommit = share((f) => f.at === 'downstream.after_commit');
    const afterSend = share(
      (f) => f.at === 'tool.after_response' || (f.at === 'downstream.after_commit' && f.do === 'kill'),
    );
    expect(afterCommit).toBeGreaterThan(0.2);
    expect(afterSend).toBeGreaterThan(0.08);
    expect(share((f) => f.at === 'approval.expiry')).toBeGreaterThan(0.04);
    expect(share((f) => f.at === 'policy.before_dispatch')).toBeGreaterThan(0.03);
    // the issue's path comes up: a lost response after commit, then the retry waits past a short approval
    const issuePath = generateCases(1, 400, contractOf).filter(
      (c) =>
        c.policy !== undefined &&
        c.faults.some((f) => f.at === 'downstream.after_commit' && f.do === 'drop_response') &&
        c.faults.some((f) => f.at === 'approval.expiry' && f.occurrence === 2),
    );
    expect(issuePath.length).toBeGreaterThan(5);
  });

  test('issue #27: every way out comes up in the first 300 cases of a seed', () => {
    for (const seed of [1, 2, 3]) {
      const cases = generateCases(seed, 300, contractOf);
      const has = (pred: (c: (typeof cases)[number]) => boolean): number => cases.filter(pred).length;
      const fault = (
        at: string,
        kind: string,
        extra: (f: (typeof cases)[number]['faults'][number]) => boolean = () => true,
      ) => has((c) => c.faults.some((f) => f.at === at && f.do === kind && extra(f)));
      for (const per of ['run', 'principal', 'tenant'])
        expect([
          seed,
          `rate limit per ${per}`,
          fault('policy.rate_limit', 'rate_limit', (f) => f.per === per),
        ]).not.toContain(0);
      // an approval that lapses, then is renewed, or is not (asked again, denied)
      const lapses = (renew: boolean) =>
        has((c) => c.approver?.renew === renew && c.faults.some((f) => f.at === 'approval.expiry'));
      expect([seed, 'lapse then renew', lapses(true)]).not.toContain(0);
      expect([seed, 'lapse then deny', lapses(false)]).not.toContain(0);
      expect([seed, 'verified cancel', fault('run.cancel', 'cancel')]).not.toContain(0);
      expect([seed, 'Temporal cancel', fault('run.cancel', 'temporal_cancel')]).not.toContain(0);
      expect([
        seed,
        'cancel during an approval wait',
        fault('run.cancel', 'cancel', (f) => f.after === 'ApprovalRequested') +
          fault('run.cancel', 'temporal_cancel', (f) => f.after === 'ApprovalRequested'),
      ]).not.toContain(0);
      expect([
        seed,
        'cancel mid-call',
        fault('run.cancel', 'cancel', (f) => f.after === 'tool.after_response'),
      ]).not.toContain(0);
      expect([seed, 'continue-as-new', fault('run.history_budget', 'continue_as_new')]).not.toContain(0);
      expect([seed, 'sealed: false', fault('downstream.seal', 'refuse_seal')]).not.toContain(0);
      expect([seed, 'junk signal', fault('run.message', 'junk_signal')]).not.toContain(0);
      expect([seed, 'junk update', fault('run.message', 'junk_update')]).not.toContain(0);
      // no case without a fault
      expect(has((c) => c.faults.length === 0)).toBe(0);
    }
  });

  test('a case with a fault its scenario cannot reach is replaced, never planned', () => {
    // A one-debit scenario can never fill a window of one: the draw is replaced, whatever else it held.
    for (const c of generateCases(4, 300, contractOf)) {
      if (c.faults.some((f) => f.do === 'rate_limit'))
        expect(['two-debits', 'n-debits', 'endless-debits', 'repeat-debit', 'parallel-debits']).toContain(c.scenario);
      // a saga runs where a step fails after others took effect, or a stop other than completed offsets a debit
      if (c.faults.some((f) => f.at.startsWith('compensation.')))
        expect(['order-fulfilment', 'stuck', 'endless-debits', 'debit-then-silence']).toContain(c.scenario);
      if (c.faults.some((f) => f.do === 'refuse_seal'))
        expect(
          c.faults.some((f) => f.at === 'downstream.before_commit' && f.do === 'drop_response' && (f.times ?? 1) >= 3),
        ).toBe(true);
    }
    expect(generateCases(4, 300, contractOf).some((c) => /draw \d+/.test(c.description))).toBe(true);
  });

  test('two-debits always asks for two different debits (two intents, not one proposed twice)', () => {
    const twos = generateCases(13, 600, contractOf).filter((c) => c.scenario === 'two-debits');
    expect(twos.length).toBeGreaterThan(20);
    for (const c of twos) expect(c.input['amount']).not.toEqual(c.input['amount2']);
  });

  test('one tool.in_flight fault per case at most', () => {
    for (const c of generateCases(11, 300, contractOf))
      expect(c.faults.filter((f) => f.at === 'tool.in_flight').length).toBeLessThanOrEqual(1);
  });

  test('a failure protocol is a valid protocol file holding the case and naming the violation', () => {
    const c = generateCase(1, 3, contractOf);
    const p = failureProtocol(1, c, [{ invariant: 'failed_means_no_effect', message: 'lc_1 FAILED with an effect' }]);
    const parsed = parseProtocol(JSON.parse(JSON.stringify(p)));
    expect(parsed.cases).toHaveLength(1);
    expect(parsed.cases[0]!.faults).toEqual(c.faults.map((f) => expect.objectContaining(f)));
    expect(parsed.cases[0]!.description).toMatch(/failed_means_no_effect/);
  });

  test('every protocol the explorer found (protocols/regressions) is a valid protocol file that asserts the invariants', () => {
    const dir = path.join(__dirname, '..', '..', 'protocols', 'regressions');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const p = loadProtocol(path.join(dir, f));
      for (const c of p.cases) expect(c.expect).toContainEqual({ metric: 'invariant_violations', op: '==', value: 0 });
    }
  });
});
