/**
 * The lab's downstream fault injection for issue #27: a `seal` rule (`refuse_seal`) counts only seal requests and
 * never a mutating request, a mutating rule never counts a seal, and `GET /admin/faults` reports how often each
 * rule fired (what the runner's `faults_fired` reads).
 */
import { FaultInjector, FaultRuleSchema } from '../../services/faults';

describe('refuse_seal at the seal point', () => {
  test('it applies to the occurrence-th through (occurrence + times - 1)-th seal request, and counts as fired', () => {
    const f = new FaultInjector();
    const id = f.arm({ at: 'seal', do: 'refuse_seal', occurrence: 2, times: 2 });
    const seals = [1, 2, 3, 4].map(() => f.refuseSeal('/v1/operations/op_1/seal'));
    expect(seals).toEqual([false, true, true, false]);
    expect(f.states()).toEqual([expect.objectContaining({ id, seen: 3, fired: 2 })]);
  });

  test('a seal rule never touches a mutating request, nor a mutating rule a seal', () => {
    const f = new FaultInjector();
    f.arm({ at: 'seal', do: 'refuse_seal', times: 5 });
    const drop = f.arm({ at: 'before_commit', do: 'drop_response' });
    expect(f.plan('/v1/debits').at('before_commit')).toEqual([
      expect.objectContaining({ ruleId: drop, do: 'drop_response' }),
    ]);
    expect(f.refuseSeal('/v1/operations/op_1/seal')).toBe(true);
    expect(f.states().map((s) => [s.rule.at, s.seen, s.fired])).toEqual([
      ['seal', 1, 1],
      ['before_commit', 1, 1],
    ]);
  });

  test('a spent rule is still reported (the evidence outlives the rule); clear forgets it', () => {
    const f = new FaultInjector();
    f.arm({ at: 'after_commit', do: 'error_5xx' });
    f.plan('/v1/debits');
    f.plan('/v1/debits');
    expect(f.states()).toEqual([expect.objectContaining({ seen: 1, fired: 1 })]);
    f.clear();
    expect(f.states()).toEqual([]);
  });

  test('refuse_seal is the one action at seal, and only at seal', () => {
    expect(FaultRuleSchema.safeParse({ at: 'seal', do: 'refuse_seal' }).success).toBe(true);
    expect(FaultRuleSchema.safeParse({ at: 'seal', do: 'drop_response' }).success).toBe(false);
    expect(FaultRuleSchema.safeParse({ at: 'before_commit', do: 'refuse_seal' }).success).toBe(false);
  });
});
