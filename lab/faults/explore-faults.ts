/**
 * The explorer's fault menu: every crash point and fault kind the catalog supports, as makers that draw a concrete
 * fault (occurrence, delay, hold, repeats, service) from the case's PRNG, weighted toward the paths that matter:
 * lost responses after commit, kills after the send, approvals lapsing, policy versions published mid-call. Pure.
 */
import type { RetryStrategy } from '../../src/domain/run';
import type { Policy } from '../../src/domain/policy-format';
import { CRASH_POINT_NAMES, CRASH_POINTS, type CrashPointName, type FaultKind } from './catalog';
import type { GenFault } from './explore-generate';
import { pick, policyWith, weighted, type Reach } from './explore-scenarios';
import { CALL_POINT_TRIGGERS, POINT_TRIGGERS, type TriggerEvent } from './protocol-format';
import { createPrng, type Prng } from './prng';
import type { CaseService } from './protocol-format';

export type FaultMaker = (prng: Prng, ctx: FaultContext) => GenFault;
export interface FaultContext {
  readonly services: readonly CaseService[];
  readonly approval: boolean;
  readonly ttlMs: number;
  readonly amountMinor: number;
  /** What a clean run of the case reaches (sends per service, debits, turns, a saga). */
  readonly reach: Reach;
  /** The case's strategy: after a commit, only `same_key_replay` sends again (`check_receipt` looks up). */
  readonly strategy: RetryStrategy;
  /**
   * The dispatch hits (`tool.at_dispatch`) of the approved call's first send and of its retry, where the case has
   * an approved call: where an `approval.expiry` wait lands on that call. Default 1 and 2.
   */
  readonly approvalHits?: readonly [number, number];
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

/** A hold of the request in flight, on the service the case draws, for `min`..`max` ms. */
const inFlight =
  (kind: 'pause' | 'delay', min: number, max: number): FaultMaker =>
  (p, c) => ({
    at: 'tool.in_flight',
    do: kind,
    occurrence: occurrence(p),
    service: serviceOf(p, c.services),
    ms: p.int(min, max),
  });

/** The in-process points of the saga a cancel or junk can be triggered at (main's lab holds the worker there). */
const SAGA_POINT_TRIGGERS = POINT_TRIGGERS.filter((t) => !CALL_POINT_TRIGGERS.includes(t));

const totalSends = (r: Reach): number => Object.values(r.sends).reduce((n, x) => n + (x ?? 0), 0);

/**
 * Where a cancel or junk message lands: a moment the run waits at anyway (the approval wait), or an in-process
 * point the first worker holds at while the runner acts: of a call (before the intent, before the send, after the
 * response), or of the saga (before a compensation's send, after its response), where one runs. Drawn among those
 * the case reaches.
 */
function triggerOf(p: Prng, c: FaultContext): { after: TriggerEvent; occurrence: number } {
  // Only moments the run stays at long enough for the runner to act there: the approval wait, or an in-process
  // point the first worker holds at. (A scripted turn is over before a poll of the ledger sees it start.)
  const sends = totalSends(c.reach);
  const options: (readonly [{ after: TriggerEvent; occurrence: number }, number])[] = [];
  if (c.approval) options.push([{ after: 'ApprovalRequested', occurrence: 1 }, 3]);
  for (const point of CALL_POINT_TRIGGERS) {
    if (sends >= 1) options.push([{ after: point, occurrence: 1 }, 2]);
    if (sends >= 2) options.push([{ after: point, occurrence: p.int(2, Math.min(sends, 3)) }, 1]);
  }
  const comps = c.reach.compensations;
  for (const point of SAGA_POINT_TRIGGERS) {
    if (comps >= 1) options.push([{ after: point, occurrence: 1 }, 2]);
    if (comps >= 2) options.push([{ after: point, occurrence: p.int(2, Math.min(comps, 3)) }, 1]);
  }
  // Nothing to hold at: the fault is drawn anyway and replaced by the reachability check.
  if (options.length === 0) return { after: 'ApprovalRequested', occurrence: 1 };
  return weighted(p, options);
}

const cancelMaker =
  (kind: 'cancel' | 'temporal_cancel'): FaultMaker =>
  (p, c) => ({ at: 'run.cancel', do: kind, ...triggerOf(p, c), ms: p.int(0, 1_000) });
const junkMaker =
  (kind: 'junk_signal' | 'junk_update'): FaultMaker =>
  (p, c) => ({ at: 'run.message', do: kind, ...triggerOf(p, c), ms: p.int(0, 1_000) });

/** A point × kind of the catalogue (lab/faults/catalog.ts): a row of the coverage table. */
export interface Cell {
  readonly at: CrashPointName;
  readonly do: FaultKind;
}
export const cellKey = (c: Cell): string => `${c.at} ${c.do}`;

/** Every point × kind the catalogue accepts, in its order. */
export const CATALOGUE_CELLS: readonly Cell[] = CRASH_POINT_NAMES.flatMap((at) =>
  (CRASH_POINTS[at].kinds as readonly FaultKind[]).map((kind) => ({ at, do: kind })),
);

/**
 * The points × kinds of the catalogue the explorer does not draw, each with its reason; the fault menu holds every
 * other one (test/unit/explore-reach.test.ts).
 */
export const NOT_EXPLORED: Readonly<Record<string, string>> = Object.fromEntries(
  (['downstream.before_commit', 'downstream.after_commit'] as const).map((at) => [
    `${at} restart_downstream`,
    'driven by the tool-named protocols (protocols/transports/); its cases on the explorer’s contract services are not ' +
      'measured yet, and a new menu entry would redraw every seeded case of the bounded exploration',
  ]),
);

/** One entry of the fault menu: the cell it draws, its weight in the mix, and the maker. */
export interface MenuEntry {
  readonly cell: Cell;
  readonly weight: number;
  readonly make: FaultMaker;
}

const entry = (at: CrashPointName, kind: FaultKind, weight: number, make: FaultMaker): MenuEntry => ({
  cell: { at, do: kind },
  weight,
  make,
});
const dsEntry = (at: 'downstream.after_commit' | 'downstream.before_commit', kind: FaultKind, weight: number) =>
  entry(at, kind, weight, downstream(at, kind));
const ipEntry = (at: CrashPointName, kind: 'kill' | 'pause' | 'delay', weight: number) =>
  entry(at, kind, weight, inProcess(at, kind));

/**
 * The fault menu: one entry per point × kind of the catalogue (a unit test holds it to the catalogue), weighted
 * toward the paths where guarantees break: lost responses after commit, kills after the send, approvals lapsing,
 * policy versions published while a call waits. Which entries a case draws from is decided by `cellReason`.
 */
export const FAULT_MENU: readonly MenuEntry[] = [
  // lost responses after commit and kills after the send: the paths that matter most
  dsEntry('downstream.after_commit', 'drop_response', 10),
  dsEntry('downstream.after_commit', 'kill', 8),
  dsEntry('downstream.after_commit', 'error_5xx', 5),
  dsEntry('downstream.after_commit', 'delay', 2),
  ipEntry('tool.after_response', 'kill', 8),
  ipEntry('tool.after_response', 'pause', 1.5),
  ipEntry('tool.after_response', 'delay', 1),
  dsEntry('downstream.before_commit', 'kill', 3),
  dsEntry('downstream.before_commit', 'error_5xx', 3),
  dsEntry('downstream.before_commit', 'drop_response', 2),
  dsEntry('downstream.before_commit', 'delay', 1),
  ipEntry('tool.before_send', 'kill', 4),
  ipEntry('tool.before_send', 'pause', 1),
  ipEntry('tool.before_send', 'delay', 1),
  ipEntry('workflow.before_intent', 'kill', 3),
  ipEntry('workflow.before_intent', 'pause', 1),
  ipEntry('workflow.before_intent', 'delay', 1),
  entry('tool.in_flight', 'pause', 2, inFlight('pause', 8_000, 15_000)),
  entry('tool.in_flight', 'delay', 1, inFlight('delay', 1_000, 4_000)),
  // held on the wallet (the protocol's default service): a case without a wallet cannot reach it
  entry('server.mid_run', 'restart_server', 2, (p) => ({
    at: 'server.mid_run',
    do: 'restart_server',
    occurrence: weighted(p, [
      [1, 80],
      [2, 20],
    ] as const),
  })),
  // only where a saga runs (cellReason): there, as often as a lost response
  ipEntry('compensation.before_send', 'kill', 5),
  ipEntry('compensation.after_response', 'kill', 5),
  ipEntry('compensation.before_send', 'pause', 1.5),
  ipEntry('compensation.before_send', 'delay', 1.5),
  ipEntry('compensation.after_response', 'pause', 1.5),
  ipEntry('compensation.after_response', 'delay', 1.5),
  // an approval with a short TTL lapses while the call waits at dispatch (on its first or its retried send)
  entry('approval.expiry', 'delay', 10, (p, c) => ({
    at: 'approval.expiry',
    do: 'delay',
    occurrence: weighted(p, [
      [c.approvalHits?.[0] ?? 1, 50],
      [c.approvalHits?.[1] ?? 2, 50],
    ] as const),
    ms: c.ttlMs + p.int(1_000, 3_000),
  })),
  entry('policy.before_dispatch', 'publish_policy', 12, (p, c) => ({
    at: 'policy.before_dispatch',
    do: 'publish_policy',
    occurrence: 1,
    policy: publishedPolicy(p, c),
  })),
  // The ways out a call can take besides a fault in a process: a rate limit, a cancel, continue-as-new, a
  // downstream that will not seal, junk messages.
  entry('run.cancel', 'cancel', 5, cancelMaker('cancel')),
  entry('run.cancel', 'temporal_cancel', 4, cancelMaker('temporal_cancel')),
  entry('run.message', 'junk_update', 3, junkMaker('junk_update')),
  entry('run.message', 'junk_signal', 2, junkMaker('junk_signal')),
  entry('policy.rate_limit', 'rate_limit', 10, (p) => {
    // Mostly a window the next debit waits out; sometimes one whose wait would pass the deadline.
    const long = p.next() < 0.25;
    return {
      at: 'policy.rate_limit',
      do: 'rate_limit',
      occurrence: 1,
      per: weighted(p, [
        ['run', 1],
        ['principal', 1],
        ['tenant', 1],
      ] as const),
      max: 1,
      action: 'wallet.debit',
      // a short window still outlasts the gap between two debits on a loaded machine
      ms: long ? p.int(60_000, 120_000) : p.int(8_000, 15_000),
    };
  }),
  // A turn that dispatched passes 10 to 14 events; one that sent nothing has had only its model call by then (9
  // events or more): so the run continues before its second turn. Never below 4: a continued run starts with 3.
  entry('run.history_budget', 'continue_as_new', 5, (p, c) => ({
    at: 'run.history_budget',
    do: 'continue_as_new',
    occurrence: 1,
    events: totalSends(c.reach) > 0 ? p.int(10, 14) : p.int(5, 7),
  })),
  // A downstream that will not seal: only a call that reconciliation must seal reaches it (see pairedFaults).
  entry('downstream.seal', 'refuse_seal', 5, (p, c) => ({
    at: 'downstream.seal',
    do: 'refuse_seal',
    occurrence: 1,
    service: serviceOf(p, sendingServices(c)),
    times: weighted(p, [
      [1, 40],
      [2, 30],
      [8, 30],
    ] as const),
  })),
];

/**
 * Why the menu entry can never fire in a case of context `c`, or undefined when it can: the entry's fault drawn
 * at its first occurrence, with the faults it needs beside it (pairedFaults), judged by `unreachable`, on each
 * service the case runs (reachable on one is enough). Computed, so the coverage table's reasons are the
 * generator's own.
 */
export function cellReason(e: MenuEntry, c: FaultContext): string | undefined {
  const made = e.make(createPrng(0, `probe:${cellKey(e.cell)}`), c);
  const variants = made.service !== undefined ? c.services.map((service) => ({ ...made, service })) : [made];
  let reason: string | undefined;
  for (const v of variants) {
    const f: GenFault = { ...v, occurrence: 1 };
    const paired = pairedFaults(f, TOOL_ATTEMPTS);
    const why =
      unreachable(f, c, paired) ?? paired.map((q, i) => unreachable(q, c, [f, ...without(paired, i)])).find(Boolean);
    if (why === undefined) return undefined;
    reason ??= why;
  }
  return reason;
}

const without = <T>(xs: readonly T[], i: number): T[] => xs.filter((_, j) => j !== i);

/** The menu entries a case of context `c` can draw, by weight (those `cellReason` finds reachable). */
export function faultMenu(c: FaultContext): (readonly [MenuEntry, number])[] {
  return FAULT_MENU.filter((e) => cellReason(e, c) === undefined).map((e) => [e, e.weight] as const);
}

const sendingServices = (c: FaultContext): CaseService[] => {
  const s = c.services.filter((x) => (c.reach.sends[x] ?? 0) > 0);
  return s.length > 0 ? s : [...c.services];
};

/**
 * The faults a drawn fault needs beside it to be reachable: a refused seal needs a call whose every attempt went
 * unanswered before commit (reconciliation then seals its key), on the same service.
 */
export function pairedFaults(f: GenFault, toolAttempts: number): GenFault[] {
  if (f.do !== 'refuse_seal') return [];
  return [
    {
      at: 'downstream.before_commit',
      do: 'drop_response',
      occurrence: 1,
      service: f.service ?? 'wallet',
      times: toolAttempts,
    },
  ];
}

/** The in-process point (and hit) a fault fires at in the case's first worker, if it fires in process. */
function inProcessHit(f: GenFault): { point: string; hit: number } | undefined {
  if (f.after !== undefined && POINT_TRIGGERS.includes(f.after)) return { point: f.after, hit: f.occurrence };
  if (f.at === 'approval.expiry') return { point: 'tool.at_dispatch', hit: f.occurrence };
  if (['workflow.before_intent', 'tool.before_send', 'tool.after_response'].includes(f.at))
    return { point: f.at, hit: f.occurrence };
  if (f.at.startsWith('compensation.')) return { point: f.at, hit: f.occurrence };
  return undefined;
}

/** Faults that take the first worker away (a kill or a stop): in-process points after them fire nowhere. */
const takesWorker = (f: GenFault): boolean => f.do === 'kill' || f.do === 'pause';

/** The attempts a call makes at most (the explorer's protocols keep the default tool limit). */
export const TOOL_ATTEMPTS = 3;

/**
 * Extra requests that other faults cause on `service` (or anywhere), counted once per request they hit: an
 * unanswered request before the commit is sent again; after the commit (or a kill after the response) only
 * `same_key_replay` sends again, `check_receipt` looks the key up and finds the effect.
 */
function retriesFrom(others: readonly GenFault[], strategy: RetryStrategy, service?: CaseService): number {
  const hit = new Set<string>();
  for (const o of others) {
    const where = o.service ?? 'wallet';
    if (service !== undefined && where !== service) continue;
    const before = o.at === 'downstream.before_commit' && o.do !== 'delay';
    const after = o.at === 'downstream.after_commit' && o.do !== 'delay' && strategy === 'same_key_replay';
    if (before || after) {
      const last = Math.min(o.occurrence + (o.times ?? 1) - 1, o.occurrence + TOOL_ATTEMPTS - 2);
      for (let n = o.occurrence; n <= last; n++) hit.add(`${where}#${n}`);
    }
    if (service === undefined && o.at === 'tool.after_response' && takesWorker(o) && strategy === 'same_key_replay')
      hit.add(`any#after_response#${o.occurrence}`);
  }
  return hit.size;
}

/**
 * Why `f` cannot fire in a case that reaches `reach` beside `others`, or undefined when it can. The generator
 * replaces a case with any such fault (explore-generate.ts), so planned faults are faults that can happen.
 */
export function unreachable(f: GenFault, c: FaultContext, others: readonly GenFault[]): string | undefined {
  const r = c.reach;
  const sends = totalSends(r) + retriesFrom(others, c.strategy);
  const on = (s: CaseService | undefined): number => {
    const first = r.sends[s ?? 'wallet'] ?? 0;
    return first > 0 ? first + retriesFrom(others, c.strategy, s ?? 'wallet') : 0;
  };
  const service = f.service ?? 'wallet';
  const requests = (n: number, what: string): string =>
    n === 0 ? `${what} gets no request` : `${what} gets ${n} request(s)`;
  const sent = (n: number): string =>
    n === 0
      ? 'the case sends no request (its proposals are refused before any dispatch)'
      : `the case sends ${n} time(s)`;
  switch (f.at) {
    case 'server.mid_run':
      if (!c.services.includes('wallet'))
        return 'the restart is timed by a wallet request, and the case runs no wallet';
      if (on(f.service) < f.occurrence) return requests(on(f.service), service);
      break;
    case 'downstream.before_commit':
    case 'downstream.after_commit':
    case 'tool.in_flight':
      if (totalSends(r) === 0) return sent(0);
      if (on(f.service) < f.occurrence) return requests(on(f.service), service);
      break;
    case 'downstream.seal':
      if (
        !others.some(
          (o) =>
            o.at === 'downstream.before_commit' &&
            o.do === 'drop_response' &&
            o.service === f.service &&
            (o.times ?? 1) >= 3,
        )
      )
        return 'no call of the case is left for reconciliation to seal';
      if (totalSends(r) === 0) return sent(0);
      if ((r.sends[service] ?? 0) < 1) return requests(0, service);
      break;
    case 'workflow.before_intent':
    case 'tool.before_send':
    case 'tool.after_response':
      if (sends < f.occurrence) return sent(sends);
      break;
    case 'compensation.before_send':
    case 'compensation.after_response':
      if (r.compensations === 0)
        return 'no saga runs: no step fails after another took effect, and the run stops completed';
      if (r.compensations < f.occurrence) return `the saga makes ${r.compensations} compensating call(s)`;
      break;
    case 'approval.expiry':
      if (!c.approval) return 'no call of it asks for an approval';
      if (sends < f.occurrence) return 'no approved call reaches that send';
      break;
    case 'policy.before_dispatch':
      if (!c.approval) return 'no call of it asks for an approval';
      break;
    case 'policy.rate_limit':
      if (r.debits < (f.max ?? 1) + 1)
        return r.debits === 0
          ? 'no debit is dispatched'
          : `${r.debits} debit(s) cannot fill a window of ${f.max ?? 1} (a call's own earlier dispatch never counts against it)`;
      break;
    case 'run.history_budget':
      if (r.turns < 2) return 'a one-turn run never reaches a second turn to continue at';
      if (others.some((o) => o.at === 'run.cancel')) return 'a cancel may end the run before its second turn';
      break;
    case 'run.cancel':
    case 'run.message': {
      const a = f.after;
      if (others.some((o) => o.at === 'run.history_budget') && f.at === 'run.cancel')
        return 'a cancel may end the run before its second turn, where it would continue as new';
      if (a === 'ApprovalRequested' && !c.approval)
        return sends === 0
          ? 'the run neither waits for an approval nor sends a request: no moment to act at'
          : 'no approval is asked';
      if (a === 'ModelRequestStarted' && r.turns < f.occurrence) return `${r.turns} turn(s)`;
      if (a !== undefined && CALL_POINT_TRIGGERS.includes(a) && sends < f.occurrence) return sent(sends);
      if (a !== undefined && SAGA_POINT_TRIGGERS.includes(a) && r.compensations < f.occurrence)
        return r.compensations === 0
          ? 'no saga runs for it to land in'
          : `the saga makes ${r.compensations} compensating call(s)`;
      break;
    }
  }
  const mine = inProcessHit(f);
  if (mine) {
    // In-process points fire in the first worker only: nothing may take it away, nor fire at the same hit.
    if (others.some(takesWorker) && !takesWorker(f)) return 'another fault takes the first worker away first';
    if (others.some((o) => JSON.stringify(inProcessHit(o)) === JSON.stringify(mine)))
      return 'another fault fires at the same hit';
  }
  if (takesWorker(f) && others.some((o) => takesWorker(o) || inProcessHit(o) !== undefined))
    return 'one fault per case takes the first worker away';
  if (f.at === 'run.cancel' && others.some((o) => o.at === 'run.cancel')) return 'one cancel per case';
  return undefined;
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
