/**
 * In-memory fault injection for downstream services, armed per test with `POST /admin/faults`.
 *
 * Every rule counts the mutating requests that match it from the moment it was armed; it applies to the
 * `occurrence`-th through `occurrence + times - 1`-th of them. A request collects its applicable actions once,
 * on arrival (a `FaultPlan`), and the route executes them at `before_commit` and `after_commit`.
 */
import { z } from 'zod';
import type { FaultAction, FaultPoint, FaultRule } from '../src/downstream/protocol';

/** Longest `delay` a rule may ask for. */
export const MAX_FAULT_DELAY_MS = 600_000;

/** zod schema of a `FaultRule` body. */
export const FaultRuleSchema = z
  .strictObject({
    at: z.enum(['before_commit', 'after_commit']),
    do: z.enum(['drop_response', 'delay', 'error_5xx']),
    ms: z.number().int().min(0).max(MAX_FAULT_DELAY_MS).optional(),
    occurrence: z.number().int().min(1).optional(),
    times: z.number().int().min(1).optional(),
    path: z.string().startsWith('/').optional(),
  })
  .refine((r) => r.do !== 'delay' || r.ms !== undefined, { message: 'a delay rule needs ms', path: ['ms'] });

/** One action a request must suffer at a point. */
export interface PlannedFault {
  readonly ruleId: string;
  readonly at: FaultPoint;
  readonly do: FaultAction;
  readonly ms: number;
}

/** The faults chosen for one request. */
export class FaultPlan {
  constructor(readonly faults: readonly PlannedFault[]) {}

  /** The actions to run at `point`, in arming order. */
  at(point: FaultPoint): readonly PlannedFault[] {
    return this.faults.filter((f) => f.at === point);
  }
}

interface ArmedRule {
  readonly id: string;
  readonly rule: FaultRule;
  seen: number;
}

/** The set of armed fault rules of one service process. */
export class FaultInjector {
  private rules: ArmedRule[] = [];
  private nextId = 1;

  /** Arms a rule and returns its id. */
  arm(rule: FaultRule): string {
    const id = `fault_${this.nextId++}`;
    this.rules.push({ id, rule, seen: 0 });
    return id;
  }

  /** Disarms every rule. */
  clear(): void {
    this.rules = [];
  }

  /** Counts one mutating request to `path` against every matching rule and returns what applies to it. */
  plan(path: string): FaultPlan {
    const faults: PlannedFault[] = [];
    for (const armed of this.rules) {
      const { rule } = armed;
      if (rule.path !== undefined && rule.path !== path) continue;
      armed.seen += 1;
      const first = rule.occurrence ?? 1;
      const last = first + (rule.times ?? 1) - 1;
      if (armed.seen >= first && armed.seen <= last) {
        faults.push({ ruleId: armed.id, at: rule.at, do: rule.do, ms: rule.ms ?? 0 });
      }
    }
    this.rules = this.rules.filter((a) => a.seen < (a.rule.occurrence ?? 1) + (a.rule.times ?? 1) - 1);
    return new FaultPlan(faults);
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
