/**
 * The explorer's case generator: from a seed, fault-protocol cases (`ledgerloop.fault-protocol/1`, every value
 * concrete) for the runner to execute. Pure and deterministic: case i draws only from `createPrng(seed,
 * "explore:case:i")`, so the same seed gives the same cases on every machine, and `--runs 20` is the first 20
 * cases of `--runs 200`. No Math.random, no clock.
 *
 * The mix is weighted toward the paths that break guarantees: lost responses after commit, kills after the send,
 * approvals with a short TTL that lapse while a call waits, and policy versions published between proposal and
 * dispatch. Every fourth case takes the next scenario of a fixed rotation, so every scenario comes up; every fourth
 * case (another quarter) is aimed at the next point × kind of the catalogue, so every cell comes up (`targetOf`).
 */
import type { RetryStrategy } from '../../src/domain/run';
import type { IdempotencyContract } from '../../src/domain/tool';
import type { Policy, RateLimitScope } from '../../src/domain/policy-format';
import type { CrashPointName, FaultKind } from './catalog';
import {
  cellKey,
  cellReason,
  FAULT_MENU,
  faultMenu,
  pairedFaults,
  TOOL_ATTEMPTS,
  unreachable,
  type Cell,
  type FaultContext,
} from './explore-faults';
import {
  allowedStrategies,
  pick,
  policyWith,
  type Reach,
  SCENARIO_ROTATION,
  SCENARIO_TEMPLATES,
  weighted,
} from './explore-scenarios';
import { createPrng, type Prng } from './prng';
import { PROTOCOL_FORMAT, type CaseService, type TriggerEvent } from './protocol-format';

export {
  allowedStrategies,
  NOT_GENERATED,
  SCENARIO_ROTATION,
  SCENARIO_TEMPLATES,
  strategiesFor,
} from './explore-scenarios';

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
 * What a case of the coverage rotation is aimed at: a point × kind of the catalogue, and for a few cells the path
 * through it that matters on its own (a cancel while the run waits for an approval, or at a point of a call; an
 * approval that lapses and is renewed, or is not; a rate limit per run, principal or tenant).
 */
export interface Aim {
  readonly cell: Cell;
  readonly label: string;
  /** Whether the case's first fault takes this path (default: any fault of the cell does). */
  readonly fits?: (f: GenFault, c: Pick<GenCase, 'approver'>) => boolean;
}

const atApproval = (f: GenFault): boolean => f.after === 'ApprovalRequested';
const PATHS: Readonly<Record<string, readonly Omit<Aim, 'cell'>[]>> = {
  'run.cancel cancel': [
    { label: 'while the run waits for an approval', fits: atApproval },
    { label: 'at a point of a call', fits: (f) => !atApproval(f) },
  ],
  'run.cancel temporal_cancel': [
    { label: 'while the run waits for an approval', fits: atApproval },
    { label: 'at a point of a call', fits: (f) => !atApproval(f) },
  ],
  'approval.expiry delay': [
    { label: 'then renewed', fits: (_f, c) => c.approver?.renew === true },
    { label: 'then denied', fits: (_f, c) => c.approver?.renew === false },
  ],
  'policy.rate_limit rate_limit': (['run', 'principal', 'tenant'] as const).map((per) => ({
    label: `per ${per}`,
    fits: (f: GenFault) => f.per === per,
  })),
};

/** The coverage rotation: every entry of the fault menu, in its order, split into its paths where it has some. */
export const AIMS: readonly Aim[] = FAULT_MENU.flatMap(({ cell }) =>
  (PATHS[cellKey(cell)] ?? [{ label: '' }]).map((p) => ({ cell, ...p })),
);

/**
 * What case `index` of `seed` is aimed at, if anything: every fourth case (index 1, 5, 9...) takes the next aim of
 * the rotation (shifted by the seed), so every point × kind of the catalogue, and every path of AIMS, is planned
 * within 4 × `AIMS.length` cases.
 */
export function targetOf(seed: number, index: number): Aim | undefined {
  if (index % 4 !== 1) return undefined;
  return AIMS[(Math.floor(index / 4) + (seed % AIMS.length)) % AIMS.length]!;
}

/** Whether generated case `c` takes the path `aim` names with its first fault. */
export function hitsAim(c: GenCase, aim: Aim): boolean {
  const f = c.faults[0];
  return f !== undefined && f.at === aim.cell.at && f.do === aim.cell.do && (aim.fits?.(f, c) ?? true);
}

/**
 * Generates case `index` of the exploration of `seed`. A drawn case any of whose faults cannot fire in its scenario
 * (explore-faults.ts `unreachable`: a send the scenario never makes, a saga that never runs, one debit for a rate
 * limit to hold back...) is replaced by the next draw of the same index, so every planned fault can happen. A case
 * aimed at a cell (`targetOf`) is drawn in a scenario that can reach it, with that cell's fault first.
 */
export function generateCase(seed: number, index: number, contractOf: ContractOf): GenCase {
  const target = targetOf(seed, index);
  let last: { c: GenCase; ctx: FaultContext } | undefined;
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    last = drawCase(seed, index, contractOf, draw, target);
    const { c, ctx } = last;
    const aimed = target === undefined || hitsAim(c, target);
    if (aimed && c.faults.every((f, i) => unreachable(f, ctx, without(c.faults, i)) === undefined)) return c;
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
    ...approvalHitsOf(t),
  };
}

/**
 * Where the approved call's sends fall among the case's dispatches: its first send is the n-th dispatch when the
 * calls before it go one at a time (two-debits: the 2nd), and its retry the next. A parallel first turn dispatches
 * in no fixed order: there the default (1 and 2) stays.
 */
function approvalHitsOf(t: (typeof SCENARIO_TEMPLATES)[string]): { approvalHits?: readonly [number, number] } {
  const path = t.approvalPath;
  return path && !t.compensable ? { approvalHits: [path.request, path.retrySend] } : {};
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
    ...(t.compensable ? { compensations: 0, turns: 2 } : {}),
  };
}

/** A case's scenario, approval path, strategy, variables and setup, and the context its faults are drawn in. */
interface Drawn {
  readonly scenario: string;
  readonly approval: boolean;
  readonly strategy: RetryStrategy;
  readonly vars: Record<string, unknown>;
  readonly setup: GenCase['setup'];
  readonly ttlMs: number;
  readonly policy: Policy | undefined;
  readonly approver: GenCase['approver'];
}

/** Draws everything of a case in `scenario` but its faults (the order of draws is the generator's contract). */
function drawSetting(prng: Prng, scenario: string, contractOf: ContractOf): Drawn {
  const t = SCENARIO_TEMPLATES[scenario]!;
  const approval = t.approvals === 'always' || (t.approvals === 'maybe' && prng.next() < 0.45);
  const strategy = pick(prng, allowedStrategies(t.tools.map(contractOf)));
  const vars = t.vars(prng, { approval });
  const setup = t.setup ? t.setup(prng) : undefined;
  // A short policy TTL for approvals most of the time an approval happens, so it can lapse before a retry.
  const shortTtl = approval && prng.next() < 0.7;
  const ttlMs = shortTtl ? prng.int(1_500, 4_000) : 600_000;
  const policy = shortTtl ? policyWith('explore/1', {}, ttlMs) : undefined;
  const approver = approval
    ? {
        decision: prng.next() < 0.85 ? ('approve' as const) : ('deny' as const),
        ...(shortTtl && prng.next() < 0.5 ? { ttlMs } : {}),
        renew: prng.next() < 0.5,
        afterMs: prng.int(0, 1_500),
      }
    : undefined;
  return { scenario, approval, strategy, vars, setup, ttlMs, policy, approver };
}

function contextOfDrawn(d: Drawn): FaultContext {
  const t = SCENARIO_TEMPLATES[d.scenario]!;
  const amountMinor = (d.vars['amount2'] ?? d.vars['amount']) as { minor: number } | undefined;
  return {
    services: t.services,
    approval: d.approval,
    ttlMs: Math.min(d.ttlMs, 4_000),
    amountMinor: amountMinor?.minor ?? 1_000,
    reach: reachOf(t, d.vars, d.setup, d.approver),
    strategy: d.strategy,
    ...approvalHitsOf(t),
  };
}

/** Settings of a scenario sampled to find where a cell can fire (`scenarioReach`). */
const REACH_SAMPLES = 48;

/**
 * Whether the cell can fire in a case of `scenario`, judged on REACH_SAMPLES seeded settings of it (approval or
 * not, capacity or none, 2 or 3 turns...): undefined when one of them reaches it, else the reason most of them
 * give (`cellReason`). Pure and deterministic: the coverage table prints these reasons.
 */
export function scenarioReach(cell: Cell, scenario: string, contractOf: ContractOf): string | undefined {
  const key = `${cellKey(cell)}|${scenario}`;
  const cached = reachCache.get(key);
  if (cached !== undefined) return cached.reason;
  const e = FAULT_MENU.find((m) => cellKey(m.cell) === cellKey(cell));
  const reasons = new Map<string, number>();
  let reason: string | undefined = e === undefined ? 'the generator has no maker for it' : undefined;
  if (e !== undefined) {
    for (let k = 0; k < REACH_SAMPLES; k++) {
      const ctx = contextOfDrawn(drawSetting(createPrng(0, `reach:${key}:${k}`), scenario, contractOf));
      const why = cellReason(e, ctx);
      if (why === undefined) {
        reasons.clear();
        break;
      }
      reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
    reason = [...reasons].sort((a, b) => b[1] - a[1])[0]?.[0];
  }
  reachCache.set(key, { reason });
  return reason;
}
const reachCache = new Map<string, { reason: string | undefined }>();

/** The scenarios in which `cell` can fire (scenarioReach), in rotation order. */
export function scenariosReaching(cell: Cell, contractOf: ContractOf): string[] {
  return SCENARIO_ROTATION.filter((s) => scenarioReach(cell, s, contractOf) === undefined);
}

function drawCase(
  seed: number,
  index: number,
  contractOf: ContractOf,
  draw: number,
  target: Aim | undefined,
): { c: GenCase; ctx: FaultContext } {
  const prng = createPrng(seed, draw === 0 ? `explore:case:${index}` : `explore:case:${index}:draw:${draw}`);
  const reaching = target ? scenariosReaching(target.cell, contractOf) : [];
  const scenario =
    target !== undefined && reaching.length > 0
      ? weighted(
          prng,
          reaching.map((n) => [n, SCENARIO_TEMPLATES[n]!.weight] as const),
        )
      : index % 4 === 3
        ? SCENARIO_ROTATION[(Math.floor(index / 4) + (seed % SCENARIO_ROTATION.length)) % SCENARIO_ROTATION.length]!
        : weighted(
            prng,
            Object.entries(SCENARIO_TEMPLATES).map(([n, t]) => [n, t.weight] as const),
          );
  const t = SCENARIO_TEMPLATES[scenario]!;
  const d = drawSetting(prng, scenario, contractOf);
  const { approval, strategy, vars, setup, ttlMs, policy } = d;
  let approver = d.approver;
  const shortTtl = policy !== undefined;
  let faults: GenFault[];
  const path = t.approvalPath;
  if (target === undefined && approval && shortTtl && path && prng.next() < 0.3) {
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
  const ctx = contextOfDrawn({ ...d, approver });
  if (faults.length === 0) {
    const count = weighted(prng, [
      [1, 45],
      [2, 35],
      [3, 20],
    ] as const);
    const menu = faultMenu(ctx);
    const aimed = target && FAULT_MENU.find((e) => cellKey(e.cell) === cellKey(target.cell));
    for (let n = 0; n < count; n++) {
      // the aimed cell first, when this setting reaches it (else the draw is replaced: generateCase)
      const e = n === 0 && aimed ? aimed : weighted(prng, menu);
      const f = e.make(prng, ctx);
      if (f.at === 'tool.in_flight' && faults.some((x) => x.at === 'tool.in_flight')) continue; // one per case
      faults.push(f, ...pairedFaults(f, TOOL_ATTEMPTS));
    }
  }
  const body = { scenario, strategy, faults };
  const c: GenCase = {
    name: caseName(seed, index, body),
    description: `generated by the explorer from seed ${seed}, case ${index + 1}${target ? ` (aimed at ${cellKey(target.cell)}${target.label ? ` ${target.label}` : ''})` : ''}${draw > 0 ? ` (draw ${draw + 1}: earlier draws planned a fault their scenario cannot reach)` : ''}${approval ? `; approval path (TTL ${ttlMs} ms)` : ''}`,
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
