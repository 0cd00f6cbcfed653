/**
 * The explorer's fault menu: every crash point and fault kind the catalog supports, as makers that draw a concrete
 * fault (occurrence, delay, hold, repeats, service) from the case's PRNG, weighted toward the paths that matter:
 * lost responses after commit, kills after the send, approvals lapsing, policy versions published mid-call. Pure.
 */
import type { Policy } from '../../src/policy/policy-format';
import type { CrashPointName, FaultKind } from './catalog';
import type { GenFault } from './explore-generate';
import { pick, policyWith, weighted, type ScenarioTemplate } from './explore-scenarios';
import type { Prng } from './prng';
import type { CaseService } from './protocol-format';

export type FaultMaker = (prng: Prng, ctx: FaultContext) => GenFault;
export interface FaultContext {
  readonly services: readonly CaseService[];
  readonly approval: boolean;
  readonly ttlMs: number;
  readonly amountMinor: number;
}

export const occurrence = (prng: Prng): number =>
  weighted(prng, [
    [1, 60],
    [2, 25],
    [3, 15],
  ] as const);
const serviceOf = (prng: Prng, services: readonly CaseService[]): CaseService =>
  services.includes('wallet') && prng.next() < 0.6 ? 'wallet' : pick(prng, services);
const downstream =
  (at: 'downstream.after_commit' | 'downstream.before_commit', kind: FaultKind): FaultMaker =>
  (p, c) => ({
    at,
    do: kind,
    occurrence: occurrence(p),
    service: serviceOf(p, c.services),
    ...(kind === 'delay' ? { ms: p.int(500, 4_000) } : {}),
    ...(kind !== 'kill' && p.next() < 0.2 ? { times: 2 } : {}),
  });
const inProcess =
  (at: CrashPointName, kind: 'kill' | 'pause' | 'delay'): FaultMaker =>
  (p) => ({
    at,
    do: kind,
    occurrence: occurrence(p),
    ...(kind === 'pause' ? { ms: p.int(8_000, 15_000) } : kind === 'delay' ? { ms: p.int(500, 4_000) } : {}),
  });

/** Fault makers by weight, given what the case can reach. */
export function faultMenu(t: ScenarioTemplate, approval: boolean): (readonly [FaultMaker, number])[] {
  const comp = t.compensable ? 5 : 0.5;
  const menu: (readonly [FaultMaker, number])[] = [
    // lost responses after commit and kills after the send: the paths that matter most
    [downstream('downstream.after_commit', 'drop_response'), 10],
    [downstream('downstream.after_commit', 'kill'), 8],
    [downstream('downstream.after_commit', 'error_5xx'), 5],
    [downstream('downstream.after_commit', 'delay'), 2],
    [inProcess('tool.after_response', 'kill'), 8],
    [inProcess('tool.after_response', 'pause'), 1.5],
    [inProcess('tool.after_response', 'delay'), 1],
    [downstream('downstream.before_commit', 'kill'), 3],
    [downstream('downstream.before_commit', 'error_5xx'), 3],
    [downstream('downstream.before_commit', 'drop_response'), 2],
    [downstream('downstream.before_commit', 'delay'), 1],
    [inProcess('tool.before_send', 'kill'), 4],
    [inProcess('tool.before_send', 'pause'), 1],
    [inProcess('tool.before_send', 'delay'), 1],
    [inProcess('workflow.before_intent', 'kill'), 3],
    [inProcess('workflow.before_intent', 'delay'), 1],
    [
      (p, c) => ({
        at: 'tool.in_flight',
        do: 'pause',
        occurrence: occurrence(p),
        service: serviceOf(p, c.services),
        ms: p.int(8_000, 15_000),
      }),
      2,
    ],
    [
      (p, c) => ({
        at: 'tool.in_flight',
        do: 'delay',
        occurrence: occurrence(p),
        service: serviceOf(p, c.services),
        ms: p.int(1_000, 4_000),
      }),
      1,
    ],
    [
      (p) => ({
        at: 'server.mid_run',
        do: 'restart_server',
        occurrence: weighted(p, [
          [1, 80],
          [2, 20],
        ] as const),
      }),
      2,
    ],
    [inProcess('compensation.before_send', 'kill'), comp],
    [inProcess('compensation.after_response', 'kill'), comp],
    [inProcess('compensation.before_send', 'pause'), comp / 4],
    [inProcess('compensation.after_response', 'delay'), comp / 4],
  ];
  if (approval) {
    // an approval with a short TTL lapses while the call waits at dispatch (on its first or its retried send)
    menu.push([
      (p, c) => ({
        at: 'approval.expiry',
        do: 'delay',
        occurrence: weighted(p, [
          [1, 50],
          [2, 50],
        ] as const),
        ms: c.ttlMs + p.int(1_000, 3_000),
      }),
      10,
    ]);
    menu.push([
      (p, c) => ({ at: 'policy.before_dispatch', do: 'publish_policy', occurrence: 1, policy: publishedPolicy(p, c) }),
      12,
    ]);
  }
  return menu;
}

/** A new policy version, published while a call waits for its approval: the same rules, tighter, or stricter. */
function publishedPolicy(p: Prng, c: FaultContext): Policy {
  const variant = weighted(p, [
    ['same', 1],
    ['lower', 1],
    ['always', 1],
  ] as const);
  if (variant === 'lower')
    return policyWith('explore/2-lower', { maxAmountMinor: Math.max(1, Math.floor(c.amountMinor / 2)) });
  if (variant === 'always') return policyWith('explore/2-always', { approval: 'always' }, c.ttlMs);
  return policyWith('explore/2-same', {}, c.ttlMs);
}
