/**
 * The scenarios the explorer generates cases for: per scenario of the scripted model, its weight in the mix, the
 * tools it proposes (whose declared contracts decide the strategies), the services it needs, whether its calls can
 * need an approval, whether it registers compensations, and how to fill its variables. Plus the seeded draw helpers
 * and the policies the generator writes. Pure.
 */
import type { RetryStrategy } from '../../src/domain/run';
import type { IdempotencyContract } from '../../src/domain/tool';
import { DEFAULT_POLICY, type Policy, type PolicyRule } from '../../src/domain/policy-format';
import type { GenCase } from './explore-generate';
import type { Prng } from './prng';
import type { CaseService } from './protocol-format';

/** A scenario as the generator knows it: the tools it proposes and how to fill its variables. */
export interface ScenarioTemplate {
  readonly weight: number;
  /** The tools the scenario's model proposes (their contracts decide the strategies). */
  readonly tools: readonly string[];
  readonly services: readonly CaseService[];
  /** Whether a call of it can need a human approval (then approval faults make sense). */
  readonly approvals: 'never' | 'maybe' | 'always';
  /**
   * Whether a failed call of its parallel turn makes the saga offset the others (order-fulfilment); a denied call
   * of that turn stops the run there instead. Where compensation points can fire is `reach().compensations`.
   */
  readonly compensable: boolean;
  /**
   * Where the path lies, for a scenario with an approved call: the service and the matching request number
   * of that call's first send (whose response is dropped), and the in-process send hit of its retry (delayed
   * past the approval's expiry).
   */
  readonly approvalPath?: { readonly service: CaseService; readonly request: number; readonly retrySend: number };
  vars(prng: Prng, ctx: { approval: boolean }): Record<string, unknown>;
  setup?(prng: Prng): NonNullable<GenCase['setup']>;
  /** What a clean run of the case reaches: the feasibility check of its faults (explore-faults.ts) reads it. */
  reach(vars: Record<string, unknown>, setup: GenCase['setup']): Reach;
}

/**
 * What a clean run of a case reaches, counted from its scenario script and variables: first sends per service
 * (each one a dispatch, an intent and a tool.before_send hit), wallet debits decided, model turns, and how many
 * compensating calls its saga makes (a step failed after others took effect, or the run stopped other than
 * `completed` with effects standing: `onAbort: 'compensate'` offsets them). A fault that needs more cannot fire.
 */
export interface Reach {
  readonly sends: Partial<Record<CaseService, number>>;
  readonly debits: number;
  readonly turns: number;
  readonly compensations: number;
}

const walletReach = (sends: number, turns: number, compensations = 0): Reach => ({
  sends: sends > 0 ? { wallet: sends } : {},
  debits: sends,
  turns,
  compensations,
});

/** The shipping capacity an order-fulfilment setup gives (0: shipping refuses, and the saga offsets the rest). */
function shippingCapacity(setup: GenCase['setup']): number {
  const cap = setup?.find((r) => r.service === 'shipping' && r.path === '/admin/capacity');
  return Number((cap?.body as { remaining?: number } | undefined)?.remaining ?? 5);
}

const eur = (minor: number): { minor: number; currency: string } => ({ minor, currency: 'EUR' });
/** Under the built-in policy a debit above 50,000 needs an approval, above 100,000 is denied. */
const debitAmount = (prng: Prng, approval: boolean): number =>
  approval ? prng.int(50_001, 99_000) : prng.int(100, 49_000);

/** A scenario that only debits (and refunds) the wallet: no approvals, no compensations. */
const walletOnly = (
  weight: number,
  tools: readonly string[],
  vars: ScenarioTemplate['vars'],
  reach: ScenarioTemplate['reach'],
): ScenarioTemplate => ({
  weight,
  tools,
  services: ['wallet'],
  approvals: 'never',
  compensable: false,
  vars,
  reach,
});

export const SCENARIO_TEMPLATES: Readonly<Record<string, ScenarioTemplate>> = {
  'wallet-debit': {
    weight: 30,
    tools: ['wallet_debit'],
    services: ['wallet'],
    approvals: 'maybe',
    compensable: false,
    approvalPath: { service: 'wallet', request: 1, retrySend: 2 },
    vars: (p, c) => ({ account: 'acct_1', amount: eur(debitAmount(p, c.approval)) }),
    reach: () => walletReach(1, 2),
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
    reach: () => walletReach(2, 3),
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
    // three parallel first sends; the order is marked fulfilled only when shipping took it
    reach: (_v, setup) => {
      const shipped = shippingCapacity(setup) > 0;
      return {
        sends: { inventory: 1, wallet: 1, shipping: 1, ...(shipped ? { orders: 1 } : {}) },
        debits: 1,
        turns: shipped ? 3 : 2,
        // shipping refuses: the saga releases the reservation and refunds the debit
        compensations: shipped ? 0 : 2,
      };
    },
  },
  'send-email': {
    weight: 6,
    tools: ['notifications_send_email'],
    services: ['notifications'],
    approvals: 'always',
    compensable: false,
    approvalPath: { service: 'notifications', request: 1, retrySend: 2 },
    vars: (p) => ({ to: 'ada@example.com', template: p.next() < 0.5 ? 'welcome' : 'receipt' }),
    reach: () => ({ sends: { notifications: 1 }, debits: 0, turns: 2, compensations: 0 }),
  },
  // the model's refund is refused (refunds are the saga's): one debit sent
  'injected-refund': walletOnly(
    3,
    ['wallet_debit', 'wallet_refund'],
    (p) => ({ account: 'acct_1', amount: eur(p.int(100, 20_000)) }),
    () => walletReach(1, 3),
  ),
  // one debit per turn: where rate limits, cancels between turns and continue-as-new come up
  'n-debits': walletOnly(
    8,
    ['wallet_debit'],
    (p) => ({ account: 'acct_1', turns: p.int(2, 3) }),
    (v) => walletReach(Number(v['turns']), Number(v['turns']) + 1),
  ),
  gullible: walletOnly(
    2,
    ['wallet_debit', 'wallet_refund'],
    (p) => ({ account: 'acct_1', amount: eur(p.int(100, 20_000)) }),
    () => walletReach(1, 2),
  ),
  // the same debit every turn is one intent: one send, then no-progress detection stops the run
  // (budget_exhausted) and the saga refunds the debit
  stuck: walletOnly(
    2,
    ['wallet_debit'],
    () => ({ account: 'acct_1' }),
    () => walletReach(1, 2, 1),
  ),
  'over-limit-debit': walletOnly(
    2,
    ['wallet_debit'],
    () => ({ account: 'acct_1' }),
    () => walletReach(0, 2),
  ),
  'malformed-arguments': walletOnly(
    2,
    ['wallet_debit'],
    () => ({ account: 'acct_1' }),
    () => walletReach(0, 2),
  ),
  'cross-tenant': walletOnly(
    2,
    ['wallet_debit'],
    () => ({ foreignAccount: 'acct_globex' }),
    () => walletReach(0, 2),
  ),
  // a debit per turn until the turn budget (8): counted low, the deadline may come first under faults; the stop
  // (budget_exhausted) refunds every debit
  'endless-debits': walletOnly(
    2,
    ['wallet_debit'],
    () => ({ account: 'acct_1' }),
    () => walletReach(4, 4, 4),
  ),
  // the same debit twice in one turn (one intent), again in the next turn (repeated), and a second charge of the
  // same amount with its own memo: two sends, two effects
  'repeat-debit': walletOnly(
    3,
    ['wallet_debit'],
    (p) => ({ account: 'acct_1', amount: eur(p.int(100, 20_000)) }),
    () => walletReach(2, 3),
  ),
  // 2 to 4 different debits side by side in one turn, each tracked by its own call id
  'parallel-debits': walletOnly(
    3,
    ['wallet_debit'],
    (p) => ({ account: 'acct_1', count: p.int(2, 4) }),
    (v) => walletReach(Number(v['count']), 2),
  ),
  // one debit, then a model with nothing more to say: the run stops model_failed and the saga refunds the debit
  'debit-then-silence': walletOnly(
    3,
    ['wallet_debit'],
    (p) => ({ account: 'acct_1', amount: eur(p.int(100, 20_000)) }),
    () => walletReach(1, 2, 1),
  ),
};

/** The rotation that guarantees coverage: every scenario the generator knows, in a fixed order. */
export const SCENARIO_ROTATION = Object.keys(SCENARIO_TEMPLATES);

/**
 * Scripted scenarios the generator does not draw, each with its reason. Adding one to the templates would change
 * every seed's plan, and with it the measured runs docs/fault-protocol.md reports.
 */
export const NOT_GENERATED: Readonly<Record<string, string>> = {
  'deep-arguments':
    'a proposal nested past the depth limit is refused at validation, before any tool point a fault could hit; ' +
    'test/workflow/deep-proposal.test.ts runs it (issue #39 hole 3)',
};

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

export function pick<T>(prng: Prng, items: readonly T[]): T {
  return items[prng.int(0, items.length - 1)]!;
}

export function weighted<T>(prng: Prng, items: readonly (readonly [T, number])[]): T {
  const total = items.reduce((n, [, w]) => n + w, 0);
  let r = prng.next() * total;
  for (const [item, w] of items) {
    if (r < w) return item;
    r -= w;
  }
  return items[items.length - 1]![0];
}

/** The built-in policy's rules with the debit rule replaced (compensating refunds stay allowed). */
export function policyWith(version: string, debit: Partial<PolicyRule>, approvalTtlMs?: number): Policy {
  return {
    ...DEFAULT_POLICY,
    version,
    ...(approvalTtlMs !== undefined ? { approvalTtlMs } : {}),
    rules: DEFAULT_POLICY.rules.map((r) => (r.action === 'wallet.debit' ? { ...r, ...debit } : r)),
  };
}
