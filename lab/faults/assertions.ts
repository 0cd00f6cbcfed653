/**
 * Assertions are data: a metric, a comparison and a value. The evaluator compares the observed metrics of one
 * case against them and explains every failure with the case, the metric, the expected and the observed value.
 */
import type { Expectation } from './protocol-format';
import { isMetric, type Comparison, type MetricValue } from './metrics';

/** One assertion that did not hold (or could not be evaluated). */
export interface AssertionFailure {
  readonly metric: string;
  readonly op: Comparison;
  readonly expected: MetricValue;
  /** What the durable records said; null when the metric could not be measured. */
  readonly observed: MetricValue | null;
  /** A full sentence naming the case, the metric, the expected and the observed value. */
  readonly message: string;
}

/** Whether `observed op expected` holds. Ordered comparisons hold only between numbers. */
export function compare(observed: MetricValue, op: Comparison, expected: MetricValue): boolean {
  switch (op) {
    case '==':
      return observed === expected;
    case '!=':
      return observed !== expected;
    default: {
      if (typeof observed !== 'number' || typeof expected !== 'number') return false;
      if (op === '>=') return observed >= expected;
      if (op === '<=') return observed <= expected;
      if (op === '>') return observed > expected;
      return observed < expected;
    }
  }
}

function show(v: MetricValue | null): string {
  return v === null ? 'nothing (not measured)' : JSON.stringify(v);
}

/** Evaluates every expectation of `caseName` against `metrics`; returns the failures (empty: all held). */
export function evaluateExpectations(
  caseName: string,
  expectations: readonly Expectation[],
  metrics: Readonly<Record<string, MetricValue | undefined>>,
): AssertionFailure[] {
  const failures: AssertionFailure[] = [];
  for (const e of expectations) {
    const op = e.op as Comparison;
    const raw = isMetric(e.metric) ? metrics[e.metric] : undefined;
    const observed = raw === undefined ? null : raw;
    if (observed !== null && compare(observed, op, e.value)) continue;
    failures.push({
      metric: e.metric,
      op,
      expected: e.value,
      observed,
      message: `case "${caseName}": expected ${e.metric} ${op} ${JSON.stringify(e.value)}, observed ${show(observed)}`,
    });
  }
  return failures;
}
