/**
 * The explorer's case generator: from a seed, fault-protocol cases (`ledgerloop.fault-protocol/1`, every value
 * concrete) for the runner to execute. Pure and deterministic: case i draws only from `createPrng(seed,
 * "explore:case:i")`, so the same seed gives the same cases on every machine, and `--runs 20` is the first 20
 * cases of `--runs 200`. No Math.random, no clock.
 *
 * The mix is weighted toward the paths that break guarantees: lost responses after commit, kills after the send,
 * approvals with a short TTL that lapse while a call waits, and policy versions published between proposal and
 * dispatch. Every fourth case takes the next scenario of a fixed rotation, so every scenario comes up.
 */
import type { RetryStrategy } from '../../src/domain/run';
import type { IdempotencyContract } from '../../src/domain/tool';
import type { Policy, RateLimitScope } from '../../src/domain/policy-format';
import type { CrashPointName, FaultKind } from './catalog';
import { faultMenu, pairedFaults, TOOL_ATTEMPTS, unreachable, type FaultContext } from './explore-faults';
import {
  allowedStrategies,
  pick,
  policyWith,
  type Reach,
  SCENARIO_ROTATION,
  SCENARIO_TEMPLATES,
  weighted,
} from './explore-scenarios';
import { createPrng } from './prng';
import { PROTOCOL_FORMAT, type CaseService, type TriggerEvent } from './protocol-format';

export { allowedStrategies, SCENARIO_ROTATION, SCENARIO_TEMPLATES, strategiesFor } from './explore-scenarios';

/** Every run's one deadline in an exploration: long enough for approvals, pauses and compensation. */
export const EXPLORE_RUN_DEADLINE_MS = 30_000;

/** What a generated case asserts: the universal invariants, never a per-case expectation. */
export const UNIVERSAL_EXPECT = [
  { metric: 'invariant_violations', op: '==', value: 0 },
  { metric: 'violation_count', op: '==', value: 0 },
  { metric: 'stale_dispatch_count', op: '==', value: 0 },
  { metric: 'mismatched_dispatch_count', op: '==', value: 0 },
  { metric: 'replay_ok', op: '==', value: true },
  { metric: 'completed', op: '==', value: true },
] as const;

/** A fault as written in a protocol file, every value concrete. */
export interface GenFault {
  at: CrashPointName;
  do: FaultKind;
  occurrence: number;
  ms?: number;
  times?: number;
  service?: CaseService;
  policy?: Policy;
  per?: RateLimitScope;
  max?: number;
  action?: string;
  after?: TriggerEvent;
  events?: number;
}

/** A case as written in a protocol file (the shape `parseProtocol` accepts), every value concrete. */
export interface GenCase {
  name: string;
  description: string;
  scenario: string;
  input: { principal: string; tenant: string; [k: string]: unknown };
  strategy: RetryStrategy;
  setup?: { service: CaseService; path: string; body: unknown }[];
  policy?: Policy;
  approver?: { decision: 'approve' | 'deny'; ttlMs?: number; renew: boolean; afterMs: number };
  faults: GenFault[];
  expect: { metric: string; op: string; value: number | boolean | string }[];
}

const SHORT: Partial<Record<FaultKind, string>> = {
  drop_response: 'drop',
  error_5xx: '5xx',
  restart_server: 'restart',
  publish_policy: 'publish',
};
const shortFault = (f: GenFault): string =>
  `${f.at.replace('downstream.', 'ds.')}=${SHORT[f.do] ?? f.do}#${f.occurrence}`;

/** The name a generated case carries: seed, index, scenario, strategy and its faults, short. */
export function caseName(
  seed: number,
  index: number,
  c: Pick<GenCase, 'scenario' | 'strategy' | 'faults'>,
  tag = '',
): string {
  const faults = c.faults.map(shortFault).join(' ') || 'no fault';
  return `explore ${seed}#${index + 1}${tag} ${c.scenario} ${c.strategy} ${faults}`.slice(0, 120);
}

/** Which tools' contracts the generator reads, by tool name (the caller passes the registry's declarations). */
export type ContractOf = (toolName: string) => IdempotencyContract;

/** Draws of one case, at most, before the generator gives up replacing it (never reached in practice). */
export const MAX_DRAWS = 64;

/**
 * Generates case `index` of the exploration of `seed`. A drawn case any of whose faults cannot fire in its scenario
 * (explore-faults.ts `unreachable`: a send the scenario never makes, a saga that never runs, one debit for a rate
 * limit to hold back...) is replaced by the next draw of the same index, so every planned fault can happen.
 */
export function generateCase(seed: number, index: number, contractOf: ContractOf): GenCase {
  let last: { c: GenCase; ctx: FaultContext } | undefined;
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    last = drawCase(seed, index, contractOf, draw);
    if (last.c.faults.every((f, i) => unreachable(f, last!.ctx, without(last!.c.faults, i)) === undefined))
      return last.c;
  }
  // Never in practice: keep what can fire of the last draw.
  const { c, ctx } = last!;
  const faults = c.faults.filter((f, i) => unreachable(f, ctx, without(c.faults, i)) === undefined);
  return { ...c, faults, name: caseName(seed, index, { ...c, faults }) };
}

const without = <T>(xs: readonly T[], i: number): T[] => xs.filter((_, j) => j !== i);

/** Whether `f` can fire in generated case `c` (the check the generator replaces cases by; for tests and docs). */
export function faultReachable(c: GenCase, i: number): boolean {
  const ctx = contextOf(c);
  return unreachable(c.faults[i]!, ctx, without(c.faults, i)) === undefined;
}

/** The fault context of a generated case, rebuilt from the case itself. */
export function contextOf(c: GenCase): FaultContext {
  const t = SCENARIO_TEMPLATES[c.scenario]!;
  const approval = c.approver !== undefined;
  const amount = (c.input['amount2'] ?? c.input['amount']) as { minor: number } | undefined;
  return {
    services: t.services,
    approval,
    ttlMs: Math.min(c.policy?.approvalTtlMs ?? 600_000, 4_000),
    amountMinor: amount?.minor ?? 1_000,
    reach: reachOf(t, c.input, c.setup, c.approver),
    strategy: c.strategy,
  };
}

/** What the case reaches: its scenario's count, less the approved call when the approver denies it. */
function reachOf(
  t: (typeof SCENARIO_TEMPLATES)[string],
  vars: Record<string, unknown>,
  setup: GenCase['setup'],
  approver: GenCase['approver'],
): Reach {
  const r = t.reach(vars, setup);
  if (approver?.decision !== 'deny' || !t.approvalPath) return r;
  const s = t.approvalPath.service;
  const left = Math.max(0, (r.sends[s] ?? 0) - 1);
  return {
    ...r,
    sends: { ...r.sends, [s]: left },
    debits: s === 'wallet' ? Math.max(0, r.debits - 1) : r.debits,
    // a denied call of a parallel turn stops the run there (tool_failed): no saga, no second turn
    ...(t.compensable ? { compensates: false, turns: 2 } : {}),
  };
}

function drawCase(
  seed: number,
  index: number,
  contractOf: ContractOf,
  draw: number,
): { c: GenCase; ctx: FaultContext } {
  const prng = createPrng(seed, draw === 0 ? `explore:case:${index}` : `explore:case:${index}:draw:${draw}`);
  const scenario =
    index % 4 === 3
      ? SCENARIO_ROTATION[(Math.floor(index / 4) + (seed % SCENARIO_ROTATION.length)) % SCENARIO_ROTATION.length]!
      : weighted(
          prng,
          Object.entries(SCENARIO_TEMPLATES).map(([n, t]) => [n, t.weight] as const),
        );
  const t = SCENARIO_TEMPLATES[scenario]!;
  const approval = t.approvals === 'always' || (t.approvals === 'maybe' && prng.next() < 0.45);
  const strategy = pick(prng, allowedStrategies(t.tools.map(contractOf)));
  const vars = t.vars(prng, { approval });
  const setup = t.setup ? t.setup(prng) : undefined;
  const amountMinor = (vars['amount2'] ?? vars['amount']) as { minor: number } | undefined;
  // A short policy TTL for approvals most of the time an approval happens, so it can lapse before a retry.
  const shortTtl = approval && prng.next() < 0.7;
  const ttlMs = shortTtl ? prng.int(1_500, 4_000) : 600_000;
  const policy = shortTtl ? policyWith('explore/1', {}, ttlMs) : undefined;
  let approver = approval
    ? {
        decision: prng.next() < 0.85 ? ('approve' as const) : ('deny' as const),
        ...(shortTtl && prng.next() < 0.5 ? { ttlMs } : {}),
        renew: prng.next() < 0.5,
        afterMs: prng.int(0, 1_500),
      }
    : undefined;
  let faults: GenFault[];
  const path = t.approvalPath;
  if (approval && shortTtl && path && prng.next() < 0.3) {
    // The issue's path: the approved call's first response is lost after the commit, its retry waits past the
    // approval's expiry, and the approver renews it, or does not (then the call is asked again and denied).
    faults = [
      { at: 'downstream.after_commit', do: 'drop_response', occurrence: path.request, service: path.service },
      { at: 'approval.expiry', do: 'delay', occurrence: path.retrySend, ms: ttlMs + prng.int(1_000, 3_000) },
    ];
    approver = { decision: 'approve', renew: prng.next() < 0.5, afterMs: prng.int(0, 500) };
  } else {
    faults = [];
  }
  const ctx: FaultContext = {
    services: t.services,
    approval,
    ttlMs: Math.min(ttlMs, 4_000),
    amountMinor: amountMinor?.minor ?? 1_000,
    reach: reachOf(t, vars, setup, approver),
    strategy,
  };
  if (faults.length === 0) {
    const count = weighted(prng, [
      [1, 45],
      [2, 35],
      [3, 20],
    ] as const);
    const menu = faultMenu(t, approval, ctx.reach);
    for (let n = 0; n < count; n++) {
      const f = weighted(prng, menu)(prng, ctx);
      if (f.at === 'tool.in_flight' && faults.some((x) => x.at === 'tool.in_flight')) continue; // one per case
      faults.push(f, ...pairedFaults(f, TOOL_ATTEMPTS));
    }
  }
  const body = { scenario, strategy, faults };
  const c: GenCase = {
    name: caseName(seed, index, body),
    description: `generated by the explorer from seed ${seed}, case ${index + 1}${draw > 0 ? ` (draw ${draw + 1}: earlier draws planned a fault their scenario cannot reach)` : ''}${approval ? `; approval path (TTL ${ttlMs} ms)` : ''}`,
    scenario,
    input: { principal: 'user:alice', tenant: 'acme', ...vars },
    strategy,
    ...(setup ? { setup } : {}),
    ...(policy ? { policy } : {}),
    ...(approver ? { approver } : {}),
    faults,
    expect: UNIVERSAL_EXPECT.map((e) => ({ ...e })),
  };
  return { c, ctx };
}

/** The first `runs` cases of the exploration of `seed`. */
export function generateCases(seed: number, runs: number, contractOf: ContractOf): GenCase[] {
  return Array.from({ length: runs }, (_, i) => generateCase(seed, i, contractOf));
}

/** A protocol file holding `cases` (what the runner plans, and what `--save-failures` writes). */
export function explorationProtocol(seed: number, cases: readonly GenCase[], description?: string) {
  return {
    format: PROTOCOL_FORMAT,
    description: description ?? `cases generated by \`ledgerloop faults --explore --seed ${seed}\``,
    seed,
    runDeadlineMs: EXPLORE_RUN_DEADLINE_MS,
    cases: cases.map((c) => ({ ...c })),
  };
}
