/**
 * Where one case spends its wall time: named phases, each the milliseconds between its start and its end, summed
 * when a phase occurs more than once. The runner records them per case (`phasesMs` in the report), so a slow run
 * can be taken apart by measurement instead of by guess.
 */
export class PhaseClock {
  private readonly totals = new Map<string, number>();

  /** Times `fn` under `name` (also when it throws). */
  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      this.add(name, Date.now() - t0);
    }
  }

  /** Adds `ms` to `name`. */
  add(name: string, ms: number): void {
    this.totals.set(name, (this.totals.get(name) ?? 0) + ms);
  }

  /** Every phase so far, in the order it first occurred. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.totals);
  }
}
