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
    at: z.enum(['before_commit', 'after_commit', 'seal']),
    do: z.enum(['drop_response', 'delay', 'error_5xx', 'refuse_seal']),
    ms: z.number().int().min(0).max(MAX_FAULT_DELAY_MS).optional(),
    occurrence: z.number().int().min(1).optional(),
    times: z.number().int().min(1).optional(),
    path: z.string().startsWith('/').optional(),
  })
  .refine((r) => r.do !== 'delay' || r.ms !== undefined, { message: 'a delay rule needs ms', path: ['ms'] })
  .refine((r) => (r.at === 'seal') === (r.do === 'refuse_seal'), {
    message: 'refuse_seal is the one action at seal, and only at seal',
    path: ['do'],
  });

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
  fired: number;
}

/** The set of armed fault rules of one service process. */
export class FaultInjector {
  private rules: ArmedRule[] = [];
  /** Every rule armed since the last clear, spent or not (the evidence of what fired). */
  private all: ArmedRule[] = [];
  private nextId = 1;

  /** Arms a rule and returns its id. */
  arm(rule: FaultRule): string {
    const id = `fault_${this.nextId++}`;
    const armed = { id, rule, seen: 0, fired: 0 };
    this.rules.push(armed);
    this.all.push(armed);
    return id;
  }

  /** Disarms every rule. */
  clear(): void {
    this.rules = [];
    this.all = [];
  }

  /** Every rule armed since the last clear, with its counts. */
  states(): readonly { id: string; rule: FaultRule; seen: number; fired: number }[] {
    return this.all.map((a) => ({ id: a.id, rule: a.rule, seen: a.seen, fired: a.fired }));
  }

  /** Counts one mutating request to `path` against every matching rule and returns what applies to it. */
  plan(path: string): FaultPlan {
    return new FaultPlan(this.count(path, (r) => r.at !== 'seal'));
  }

  /** Counts one seal request (`POST /v1/operations/:key/seal`) against the `seal` rules: whether to refuse it. */
  refuseSeal(path: string): boolean {
    return this.count(path, (r) => r.at === 'seal').length > 0;
  }

  private count(path: string, applies: (r: FaultRule) => boolean): PlannedFault[] {
    const faults: PlannedFault[] = [];
    for (const armed of this.rules) {
      const { rule } = armed;
      if (!applies(rule)) continue;
      if (rule.path !== undefined && rule.path !== path) continue;
      armed.seen += 1;
      const first = rule.occurrence ?? 1;
      const last = first + (rule.times ?? 1) - 1;
      if (armed.seen >= first && armed.seen <= last) {
        armed.fired += 1;
        faults.push({ ruleId: armed.id, at: rule.at, do: rule.do, ms: rule.ms ?? 0 });
      }
    }
    this.rules = this.rules.filter((a) => a.seen < (a.rule.occurrence ?? 1) + (a.rule.times ?? 1) - 1);
    return faults;
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
