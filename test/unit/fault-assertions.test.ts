/** Assertions are data: a metric, a comparison and a value, evaluated against observed metrics. */
import { compare, evaluateExpectations } from '../../lab/faults/assertions';
import type { Expectation } from '../../lab/faults/protocol-format';

describe('compare', () => {
  test.each([
    [1, '==', 1, true],
    [2, '==', 1, false],
    [2, '!=', 1, true],
    ['SUCCEEDED', '==', 'SUCCEEDED', true],
    ['FAILED', '!=', 'SUCCEEDED', true],
    [true, '==', true, true],
    [false, '==', true, false],
    [2, '>=', 2, true],
    [1, '>=', 2, false],
    [3, '>', 2, true],
    [2, '>', 2, false],
    [2, '<=', 2, true],
    [1, '<', 2, true],
    [2, '<', 2, false],
    ['2', '>=', 1, false],
    [true, '>', false, false],
  ] as const)('%j %s %j is %s', (observed, op, expected, holds) => {
    expect(compare(observed, op, expected)).toBe(holds);
  });
});

describe('evaluateExpectations', () => {
  const expectations: Expectation[] = [
    { metric: 'business_effect_count', op: '==', value: 1 },
    { metric: 'attempt_count', op: '>=', value: 2 },
    { metric: 'projection_hash_stable', op: '==', value: true },
  ];

  test('every assertion held: no failure', () => {
    expect(
      evaluateExpectations('c', expectations, {
        business_effect_count: 1,
        attempt_count: 3,
        projection_hash_stable: true,
      }),
    ).toEqual([]);
  });

  test('a wrong assertion names the case, the metric, the expected and the observed value', () => {
    const failures = evaluateExpectations(
      'opening failure, blind retry',
      [{ metric: 'business_effect_count', op: '==', value: 1 }],
      { business_effect_count: 2 },
    );
    expect(failures).toEqual([
      {
        metric: 'business_effect_count',
        op: '==',
        expected: 1,
        observed: 2,
        message: 'case "opening failure, blind retry": expected business_effect_count == 1, observed 2',
      },
    ]);
  });

  test('a metric that could not be measured fails and says so', () => {
    const [failure] = evaluateExpectations('c', [{ metric: 'attempt_count', op: '>=', value: 2 }], {});
    expect(failure).toMatchObject({
      observed: null,
      message: 'case "c": expected attempt_count >= 2, observed nothing (not measured)',
    });
  });

  test('only the failing assertions are reported, in order', () => {
    const failures = evaluateExpectations('c', expectations, {
      business_effect_count: 2,
      attempt_count: 1,
      projection_hash_stable: true,
    });
    expect(failures.map((f) => f.metric)).toEqual(['business_effect_count', 'attempt_count']);
  });
});
