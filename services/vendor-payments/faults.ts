/**
 * The vendor server's fault injector (admin listener only, `--lab`): rules armed with `POST /admin/faults`, each
 * acting on the n-th matching request at one of two moments. `kill` is a real SIGKILL of the process (a restart on
 * the same database is the "downstream restart" point); `delay` holds the request (its key in progress).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

export const VendorFaultRule = z
  .object({
    at: z.enum(['before_commit', 'after_commit']),
    do: z.enum(['drop_response', 'delay', 'error_5xx', 'kill']),
    /** Only requests to this path, e.g. `/v1/charges`. Default every mutating path. */
    path: z.string().startsWith('/').optional(),
    occurrence: z.number().int().min(1).default(1),
    times: z.number().int().min(1).default(1),
    ms: z.number().int().min(0).max(600_000).default(2_000),
  })
  .strict();
export type VendorFaultRule = z.infer<typeof VendorFaultRule>;

interface Armed {
  readonly id: string;
  readonly rule: VendorFaultRule;
  seen: number;
  fired: number;
}

export class VendorFaults {
  private readonly armed: Armed[] = [];
  private next = 1;

  constructor(private readonly kill: () => void = () => process.kill(process.pid, 'SIGKILL')) {}

  /** Arms `rule`; returns its id (`GET /admin/faults` reports each rule under it). */
  arm(rule: VendorFaultRule): string {
    const id = `f${this.next++}`;
    this.armed.push({ id, rule, seen: 0, fired: 0 });
    return id;
  }

  clear(): void {
    this.armed.length = 0;
  }

  state(): ReadonlyArray<{ id: string; rule: VendorFaultRule; seen: number; fired: number }> {
    return this.armed.map((a) => ({ ...a }));
  }

  /** Passes the moment for a request to `path`; returns what the caller must do instead of answering, if anything. */
  async at(at: VendorFaultRule['at'], path: string): Promise<'drop_response' | 'error_5xx' | undefined> {
    let outcome: 'drop_response' | 'error_5xx' | undefined;
    for (const a of this.armed) {
      if (a.rule.at !== at || (a.rule.path !== undefined && a.rule.path !== path)) continue;
      a.seen += 1;
      if (a.seen < a.rule.occurrence || a.fired >= a.rule.times) continue;
      a.fired += 1;
      if (a.rule.do === 'kill') {
        this.kill();
        await new Promise<never>(() => undefined);
      }
      if (a.rule.do === 'delay') await sleep(a.rule.ms);
      else if (a.rule.do !== 'kill') outcome = a.rule.do;
    }
    return outcome;
  }
}
