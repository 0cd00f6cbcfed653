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
import { DEFAULT_POLICY, type Policy, type PolicyRule } from '../policy/policy-format';
import type { IdempotencyContract } from '../domain/tool';
import type { RetryStrategy } from '../domain/run';
import type { CrashPointName, FaultKind } from './catalog';
import { createPrng, type Prng } from './prng';
import { PROTOCOL_FORMAT, type CaseService } from './protocol-format';

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

/** A scenario as the generator knows it: the tools it proposes and how to fill its variables. */
interface ScenarioTemplate {
  readonly weight: number;
  /** The tools the scenario's model proposes (their contracts decide the strategies). */
  readonly tools: readonly string[];
  readonly services: readonly CaseService[];
  /** Whether a call of it can need a human approval (then approval faults make sense). */
  readonly approvals: 'never' | 'maybe' | 'always';
  /** Whether it registers compensations (then compensation crash points can fire). */
  readonly compensable: boolean;
  /**
   * Where the issue's path lies, for a scenario with an approved call: the service and the matching request number
   * of that call's first send (whose response is dropped), and the in-process send hit of its retry (delayed
   * past the approval's expiry).
   */
  readonly approvalPath?: { readonly service: CaseService; readonly request: number; readonly retrySend: number };
  vars(prng: Prng, ctx: { approval: boolean }): Record<string, unknown>;
  setup?(prng: Prng): NonNullable<GenCase['setup']>;
}

const eur = (minor: number): { minor: number; currency: string } => ({ minor, currency: 'EUR' });
/** Under the built-in policy a debit above 50,000 needs an approval, above 100,000 is denied. */
const debitAmount = (prng: Prng, approval: boolean): number =>
  approval ? prng.int(50_001, 99_000) : prng.int(100, 49_000);

export const SCENARIO_TEMPLATES: Readonly<Record<string, ScenarioTemplate>> = {
  'wallet-debit': {
    weight: 30,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'maybe',
    compensable: false,
    approvalPath: { service: 'wallet', request: 1, retrySend: 2 },
    vars: (p, c) => ({ account: 'acct_1', amount: eur(debitAmount(p, c.approval)) }),
  },
  'two-debits': {
    weight: 10,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'maybe',
    compensable: false,
    approvalPath: { service: 'wallet', request: 2, retrySend: 3 },
    vars: (p, c) => {
      const first = p.int(100, 20_000);
      const second = debitAmount(p, c.approval) + 1;
      // two deliberate debits: other amounts, so they are two intents (identical ones would be one, by design)
      return { account: 'acct_1', amount: eur(first), amount2: eur(second === first ? second + 1 : second) };
    },
  },
  'order-fulfilment': {
    weight: 14,
    tools: ['inventory_reserve', 'wallet_debit', 'shipping_schedule', 'orders_mark_fulfilled'],
    services: ['inventory', 'wallet', 'shipping', 'orders'],
    approvals: 'maybe',
    compensable: true,
    // three parallel first sends (inventory, wallet, shipping), then the wallet's retry
    approvalPath: { service: 'wallet', request: 1, retrySend: 4 },
    vars: (p, c) => ({
      sku: 'SKU-1',
      quantity: p.int(1, 3),
      account: 'acct_1',
      amount: eur(debitAmount(p, c.approval)),
      orderId: 'ord-1',
      address: { country: 'DE', postalCode: '10115', line1: 'Invalidenstr. 1' },
    }),
    // Half the time shipping has no capacity: the run fails a call and its saga must offset the others.
    setup: (p) => [
      { service: 'inventory', path: '/admin/stock', body: { tenant: 'acme', sku: 'SKU-1', onHand: 10 } },
      {
        service: 'orders',
        path: '/admin/orders',
        body: { tenant: 'acme', orderId: 'ord-1', customerEmail: 'ada@example.com' },
      },
      { service: 'shipping', path: '/admin/capacity', body: { remaining: p.next() < 0.5 ? 0 : 5 } },
    ],
  },
  'send-email': {
    weight: 6,
    tools: ['notifications_send_email'],
    services: ['notifications'],
    approvals: 'always',
    compensable: false,
    approvalPath: { service: 'notifications', request: 1, retrySend: 2 },
    vars: (p) => ({ to: 'ada@example.com', template: p.next() < 0.5 ? 'welcome' : 'receipt' }),
  },
  'injected-refund': {
    weight: 3,
    tools: ['wallet_debit', 'wallet_refund'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: (p) => ({ account: 'acct_1', amount: eur(p.int(100, 20_000)) }),
  },
  'n-debits': {
    weight: 3,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: (p) => ({ account: 'acct_1', turns: p.int(2, 3) }),
  },
  gullible: {
    weight: 2,
    tools: ['wallet_debit', 'wallet_refund'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: (p) => ({ account: 'acct_1', amount: eur(p.int(100, 20_000)) }),
  },
  stuck: {
    weight: 2,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: () => ({ account: 'acct_1' }),
  },
  'over-limit-debit': {
    weight: 2,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: () => ({ account: 'acct_1' }),
  },
  'malformed-arguments': {
    weight: 2,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: () => ({ account: 'acct_1' }),
  },
  'cross-tenant': {
    weight: 2,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: () => ({ foreignAccount: 'acct_globex' }),
  },
  'endless-debits': {
    weight: 1,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'never',
    compensable: false,
    vars: () => ({ account: 'acct_1' }),
  },
};

/** The rotation that guarantees coverage: every scenario the generator knows, in a fixed order. */
export const SCENARIO_ROTATION = Object.keys(SCENARIO_TEMPLATES);

/**
 * The strategies a tool's declared contract allows. `blind_retry` is never among them: it is the lab's
 * demonstration of the double charge, and the at-most-one-effect invariant does not hold under it.
 */
export function strategiesFor(contract: IdempotencyContract): RetryStrategy[] {
  return contract === 'idempotent_by_key' ? ['same_key_replay', 'check_receipt'] : ['check_receipt'];
}

/** The strategies every one of `contracts` allows (at least `check_receipt`). */
export function allowedStrategies(contracts: readonly IdempotencyContract[]): RetryStrategy[] {
  const all: RetryStrategy[] = ['same_key_replay', 'check_receipt'];
  const allowed = all.filter((s) => contracts.every((c) => strategiesFor(c).includes(s)));
  return allowed.length > 0 ? allowed : ['check_receipt'];
}

function pick<T>(prng: Prng, items: readonly T[]): T {
  return items[prng.int(0, items.length - 1)]!;
}

function weighted<T>(prng: Prng, items: readonly (readonly [T, number])[]): T {
  const total = items.reduce((n, [, w]) => n + w, 0);
  let r = prng.next() * total;
  for (const [item, w] of items) {
    if (r < w) return item;
    r -= w;
  }
  return items[items.length - 1]![0];
}

/** The built-in policy's rules with the debit rule replaced (compensating refunds stay allowed). */
function policyWith(version: string, debit: Partial<PolicyRule>, approvalTtlMs?: number): Policy {
  return {
    ...DEFAULT_POLICY,
    version,
    ...(approvalTtlMs !== undefined ? { approvalTtlMs } : {}),
    rules: DEFAULT_POLICY.rules.map((r) => (r.action === 'wallet.debit' ? { ...r, ...debit } : r)),
  };
}

type FaultMaker = (prng: Prng, ctx: FaultContext) => GenFault;
interface FaultContext {
  readonly services: readonly CaseService[];
  readonly approval: boolean;
  readonly ttlMs: number;
  readonly amountMinor: number;
}

const occurrence = (prng: Prng): number =>
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
function faultMenu(t: ScenarioTemplate, approval: boolean): (readonly [FaultMaker, number])[] {
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
