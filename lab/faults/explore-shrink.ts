/**
 * Shrinking a failing generated case to the smallest case that still fails: fewer faults first, then earlier
 * occurrences, then fewer repeated downstream requests. Greedy: the first smaller candidate that still violates
 * an invariant the original violated becomes the new case, and the search starts again from it, until no
 * candidate fails or the attempts run out. Every attempt is a real run, so the caller bounds them.
 */
import type { GenCase, GenFault } from './explore-generate';

/** The cases one step smaller than `c`, smallest-first: each fault removed, then each occurrence made earlier. */
export function shrinkCandidates(c: GenCase): GenCase[] {
  const out: GenCase[] = [];
  const withFaults = (faults: GenFault[]): GenCase => ({ ...c, faults });
  c.faults.forEach((_, i) => out.push(withFaults(c.faults.filter((__, j) => j !== i))));
  c.faults.forEach((f, i) => {
    const earlier = new Set<number>([1, f.occurrence - 1].filter((n) => n >= 1 && n < f.occurrence));
    for (const occurrence of earlier)
      out.push(withFaults(c.faults.map((g, j) => (j === i ? { ...g, occurrence } : g))));
  });
  c.faults.forEach((f, i) => {
    if ((f.times ?? 1) > 1) out.push(withFaults(c.faults.map((g, j) => (j === i ? { ...g, times: 1 } : g))));
  });
  return out;
}

/** Orders cases by size: fewer faults, then a smaller sum of occurrences and repeats. */
export function caseSize(c: GenCase): [number, number] {
  return [c.faults.length, c.faults.reduce((n, f) => n + f.occurrence + (f.times ?? 1) - 1, 0)];
}

export interface ShrinkResult<V> {
  /** The smallest case found that still fails (the original when no smaller one did). */
  readonly smallest: GenCase;
  /** What its run violated (the original's when nothing smaller failed). */
  readonly violations: V;
  /** Real runs spent. */
  readonly attempts: number;
  /** Each accepted step, as a sentence. */
  readonly steps: readonly string[];
  /** Whether the search ended because the attempts (or the time) ran out rather than at a local minimum. */
  readonly exhausted: boolean;
}

/**
 * Shrinks `original`. `attempt` runs a candidate and returns its violations, or undefined when the candidate held
 * (or another invariant than the original's failed); `canAttempt` says whether one more real run fits the budget.
 */
export async function shrink<V>(
  original: GenCase,
  violations: V,
  attempt: (c: GenCase, n: number) => Promise<V | undefined>,
  canAttempt: (n: number) => boolean,
): Promise<ShrinkResult<V>> {
  let current = original;
  let currentViolations = violations;
  let attempts = 0;
  const steps: string[] = [];
  for (;;) {
    let improved = false;
    for (const candidate of shrinkCandidates(current)) {
      if (!canAttempt(attempts)) {
        return { smallest: current, violations: currentViolations, attempts, steps, exhausted: true };
      }
      attempts += 1;
      const found = await attempt(candidate, attempts);
      if (found === undefined) continue;
      const [fb, ob] = [caseSize(candidate), caseSize(current)];
      steps.push(`${fb[0] < ob[0] ? `${ob[0]} -> ${fb[0]} faults` : `occurrences ${ob[1]} -> ${fb[1]}`}: still fails`);
      current = candidate;
      currentViolations = found;
      improved = true;
      break;
    }
    if (!improved) return { smallest: current, violations: currentViolations, attempts, steps, exhausted: false };
  }
}
