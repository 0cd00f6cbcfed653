/**
 * The explorer's fault menu: every crash point and fault kind the catalog supports, as makers that draw a concrete
 * fault (occurrence, delay, hold, repeats, service) from the case's PRNG, weighted toward the paths that matter:
 * lost responses after commit, kills after the send, approvals lapsing, policy versions published mid-call. Pure.
 */
import type { RetryStrategy } from '../../src/domain/run';
import type { Policy } from '../../src/domain/policy-format';
import type { CrashPointName, FaultKind } from './catalog';
import type { GenFault } from './explore-generate';
import { pick, policyWith, weighted, type Reach, type ScenarioTemplate } from './explore-scenarios';
import { CALL_POINT_TRIGGERS, POINT_TRIGGERS, type TriggerEvent } from './protocol-format';
import type { Prng } from './prng';
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

const totalSends = (r: Reach): number => Object.values(r.sends).reduce((n, x) => n + (x ?? 0), 0);

/**
 * Where a cancel or junk message lands: a moment the run waits at anyway (the approval wait, a rate-limit
 * deferral, the opening turn), or an in-process point of a call (the first worker holds there while the runner
 * acts): before the intent, before the send, after the response. Drawn among those the case reaches.
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

/** Fault makers by weight, given what the case can reach. */
export function faultMenu(t: ScenarioTemplate, approval: boolean, reach?: Reach): (readonly [FaultMaker, number])[] {
  const comp = t.compensable ? 5 : 0.5;
  // A case that sends nothing reaches no point of a call: only what happens to the run as a whole can fire there.
  const sends = reach === undefined ? 1 : totalSends(reach);
  const menu: (readonly [FaultMaker, number])[] = [];
  if (sends > 0) menu.push(...callFaults(comp));
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
  // The ways out a call can take besides a fault in a process: a rate limit, a cancel, continue-as-new, a
  // downstream that will not seal, junk messages.
  if (sends > 0 || approval) {
    menu.push([cancelMaker('cancel'), 5], [cancelMaker('temporal_cancel'), 4]);
    menu.push([junkMaker('junk_update'), 3], [junkMaker('junk_signal'), 2]);
  }
  if (reach === undefined || reach.debits >= 2) {
    menu.push([
      (p) => {
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
      },
      10,
    ]);
  }
  if (reach === undefined || reach.turns >= 2) {
    // A turn that dispatched passes 10 to 14 events; one that sent nothing has had only its model call by then (9
    // events or more): so the run continues before its second turn. Never below 4: a continued run starts with 3.
    menu.push([
      (p) => ({
        at: 'run.history_budget',
        do: 'continue_as_new',
        occurrence: 1,
        events: sends > 0 ? p.int(10, 14) : p.int(5, 7),
      }),
      5,
    ]);
  }
  if (reach === undefined || totalSends(reach) >= 1) {
    // A downstream that will not seal: only a call that reconciliation must seal reaches it (see pairedFaults).
    menu.push([
      (p, c) => ({
        at: 'downstream.seal',
        do: 'refuse_seal',
        occurrence: 1,
        service: serviceOf(p, sendingServices(c)),
        times: weighted(p, [
          [1, 40],
          [2, 30],
          [8, 30],
        ] as const),
      }),
      5,
    ]);
  }
  return menu;
}

/** The faults at the points of a call: downstream, on the wire, in the worker, the server, the saga. */
function callFaults(comp: number): (readonly [FaultMaker, number])[] {
  return [
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
  switch (f.at) {
    case 'downstream.before_commit':
    case 'downstream.after_commit':
    case 'tool.in_flight':
    case 'server.mid_run':
      if (on(f.service) < f.occurrence) return `${f.service ?? 'wallet'} gets ${on(f.service)} request(s)`;
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
      if ((r.sends[f.service ?? 'wallet'] ?? 0) < 1) return `${f.service ?? 'wallet'} gets no request`;
      break;
    case 'workflow.before_intent':
    case 'tool.before_send':
    case 'tool.after_response':
      if (sends < f.occurrence) return `the case sends ${sends} time(s)`;
      break;
    case 'compensation.before_send':
    case 'compensation.after_response':
      if (!r.compensates || f.occurrence > 2) return 'no saga compensates in this case';
      break;
    case 'approval.expiry':
      if (!c.approval || sends < f.occurrence) return 'no approved call reaches that send';
      break;
    case 'policy.before_dispatch':
      if (!c.approval) return 'no call waits for an approval';
      break;
    case 'policy.rate_limit':
      if (r.debits < (f.max ?? 1) + 1) return `${r.debits} debit(s) cannot fill a window of ${f.max ?? 1}`;
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
      if (a === 'ApprovalRequested' && !c.approval) return 'no approval is asked';
      if (a === 'ModelRequestStarted' && r.turns < f.occurrence) return `${r.turns} turn(s)`;
      if (a !== undefined && POINT_TRIGGERS.includes(a) && sends < f.occurrence)
        return `the case sends ${sends} time(s)`;
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
