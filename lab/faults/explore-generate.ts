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
import type { Policy } from '../../src/policy/policy-format';
import type { CrashPointName, FaultKind } from './catalog';
import { faultMenu, type FaultContext } from './explore-faults';
import {
  allowedStrategies,
  pick,
  policyWith,
  SCENARIO_ROTATION,
  SCENARIO_TEMPLATES,
  weighted,
} from './explore-scenarios';
import { createPrng } from './prng';
import { PROTOCOL_FORMAT, type CaseService } from './protocol-format';

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

/** Generates case `index` of the exploration of `seed`. */
export function generateCase(seed: number, index: number, contractOf: ContractOf): GenCase {
  const prng = createPrng(seed, `explore:case:${index}`);
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
  const ctx: FaultContext = {
    services: t.services,
    approval,
    ttlMs: Math.min(ttlMs, 4_000),
    amountMinor: amountMinor?.minor ?? 1_000,
  };
  let faults: GenFault[];
  const path = t.approvalPath;
  if (approval && shortTtl && path && prng.next() < 0.3) {
    // The issue's path: the approved call's first response is lost after the commit, its retry waits past the
    // approval's expiry, and the approver does not renew.
    faults = [
      { at: 'downstream.after_commit', do: 'drop_response', occurrence: path.request, service: path.service },
      { at: 'approval.expiry', do: 'delay', occurrence: path.retrySend, ms: ttlMs + prng.int(1_000, 3_000) },
    ];
    approver = { decision: 'approve', renew: false, afterMs: prng.int(0, 500) };
  } else {
    const count = weighted(prng, [
      [1, 45],
      [2, 35],
      [3, 20],
    ] as const);
    const menu = faultMenu(t, approval);
    faults = [];
    for (let n = 0; n < count; n++) {
      const f = weighted(prng, menu)(prng, ctx);
      if (f.at === 'tool.in_flight' && faults.some((x) => x.at === 'tool.in_flight')) continue; // one per case
      faults.push(f);
    }
  }
  const body = { scenario, strategy, faults };
  return {
    name: caseName(seed, index, body),
    description: `generated by the explorer from seed ${seed}, case ${index + 1}${approval ? `; approval path (TTL ${ttlMs} ms)` : ''}`,
    scenario,
    input: { principal: 'user:alice', tenant: 'acme', ...vars },
    strategy,
    ...(t.setup ? { setup: t.setup(prng) } : {}),
    ...(policy ? { policy } : {}),
    ...(approver ? { approver } : {}),
    faults,
    expect: UNIVERSAL_EXPECT.map((e) => ({ ...e })),
  };
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
