/** The plan of issue #27's fault kinds: rate limits in every policy, triggers held at a point, the history budget. */
import { planProtocol } from '../../lab/faults/plan';
import { parseProtocol, TRIGGER_HOLD_MS } from '../../lab/faults/protocol-format';
import { DEFAULT_POLICY } from '../../src/domain/policy-format';

const base = {
  format: 'ledgerloop.fault-protocol/1',
  seed: 3,
  runDeadlineMs: 30_000,
};
const expectations = [{ metric: 'invariant_violations', op: '==', value: 0 }];
const input = { principal: 'user:alice', tenant: 'acme', account: 'acct_1', turns: 2 };

function plan(faults: unknown[]) {
  return planProtocol(
    parseProtocol({ ...base, cases: [{ name: 'c', scenario: 'n-debits', input, faults, expect: expectations }] }),
  ).cases[0]!;
}

test('a rate limit goes into the starting policy and every version published later, one per scope', () => {
  const published = { ...DEFAULT_POLICY, version: 'p/2' };
  const pc = plan([
    { at: 'policy.rate_limit', do: 'rate_limit', per: 'tenant', max: 2, ms: 9_000 },
    { at: 'policy.before_dispatch', do: 'publish_policy', policy: published },
  ]);
  const debit = (p: typeof DEFAULT_POLICY | undefined) => p!.rules.find((r) => r.action === 'wallet.debit')!;
  expect(debit(pc.policy).rateLimit).toEqual([{ max: 2, perMs: 9_000, per: 'tenant' }]);
  expect(debit(pc.faults[1]!.policy).rateLimit).toEqual([{ max: 2, perMs: 9_000, per: 'tenant' }]);
  // the other rules are as they were
  expect(pc.policy!.rules.find((r) => r.action === 'wallet.refund')!.rateLimit).toBeUndefined();
  expect(plan([{ at: 'policy.rate_limit', do: 'rate_limit' }]).faults[0]).toMatchObject({
    per: 'run',
    max: 1,
    ms: 60_000,
    action: 'wallet.debit',
  });
});

test('a cancel or junk triggered at an in-process point holds the first worker there; a ledger trigger does not', () => {
  const pc = plan([
    { at: 'run.cancel', do: 'cancel', after: 'tool.after_response', occurrence: 2 },
    { at: 'run.message', do: 'junk_update', after: 'ApprovalRequested' },
  ]);
  expect(pc.crashPlan).toBe(`tool.after_response:2:hold:${TRIGGER_HOLD_MS}`);
  expect(pc.faults.map((f) => f.after)).toEqual(['tool.after_response', 'ApprovalRequested']);
});

test('continue_as_new sets the history budget; it needs one, at least 4', () => {
  expect(plan([{ at: 'run.history_budget', do: 'continue_as_new', events: 12 }]).budgets).toEqual({
    maxHistoryEvents: 12,
  });
  expect(() => plan([{ at: 'run.history_budget', do: 'continue_as_new' }])).toThrow(/needs the history budget/);
  expect(() => plan([{ at: 'run.history_budget', do: 'continue_as_new', events: 3 }])).toThrow(/events/);
});

test('the new fields apply where they belong only', () => {
  expect(() => plan([{ at: 'downstream.after_commit', do: 'drop_response', per: 'run' }])).toThrow(
    /per does not apply at downstream.after_commit/,
  );
  expect(() => plan([{ at: 'policy.rate_limit', do: 'rate_limit', after: 'ToolAttemptStarted' }])).toThrow(
    /after does not apply/,
  );
  expect(() => plan([{ at: 'run.cancel', do: 'junk_signal' }])).toThrow(/cannot happen at "run.cancel"/);
});
