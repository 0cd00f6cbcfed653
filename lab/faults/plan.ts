/**
 * From a validated protocol to a concrete plan: every default filled in, every range drawn from the seeded PRNG
 * (one stream per case, so adding a case does not shift the others), and the worker crash plan spelled out. The
 * same seed gives the same plan, byte for byte; the runner prints it before anything runs.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_LIMITS, type AttemptLimits, type RetryStrategy } from '../../src/domain/run';
import { CRASH_POINTS, FAULT_KIND_SHORT, type CrashPointName, type FaultKind, type InProcessPoint } from './catalog';
import { DEFAULT_POLICY, type Policy, type RateLimitScope } from '../../src/domain/policy-format';
import {
  BUILTIN_VOCABULARY,
  POINT_TRIGGERS,
  TRIGGER_HOLD_MS,
  type Approver,
  type Case,
  type Expectation,
  type FaultProtocol,
  type Probe,
  type ProtocolVocabulary,
  type ServiceName,
  type SetupRequest,
  type TriggerEvent,
} from './protocol-format';
import { createPrng, type Prng } from './prng';
import { workerFaultOf, type ToolPoint, type ToolTarget } from './tool-targets';
import type { TransportFault } from './transport-faults';

/** One fault with everything resolved. */
export interface PlannedFault {
  readonly at: CrashPointName;
  readonly do: FaultKind;
  readonly occurrence: number;
  readonly ms: number;
  readonly times: number;
  readonly service: ServiceName;
  readonly path?: string;
  /** The tool whose calls suffer it, and where its transport is reached (lab/faults/tool-targets.ts). */
  readonly tool?: string;
  readonly via?: ToolTarget['via'];
  /** An HTTP tool's method, which the proxy matches. */
  readonly method?: string;
  /** An MCP tool's name on its server (`service`), which the harness in front of the server matches. */
  readonly mcpTool?: string;
  readonly policy?: Policy;
  /** rate_limit: who shares the window, how many per window (`ms`), and which action. */
  readonly per?: RateLimitScope;
  readonly max?: number;
  readonly action?: string;
  /** run.cancel and run.message: the ledger event whose `occurrence`-th record triggers the act. */
  readonly after?: TriggerEvent;
  /** continue_as_new: the run's history budget. */
  readonly events?: number;
}

export interface PlannedAccount {
  readonly tenant: string;
  readonly account: string;
  readonly balanceMinor: number;
  readonly currency: string;
}

export interface PlannedCase {
  readonly index: number;
  readonly name: string;
  /** File- and id-safe form of the name. */
  readonly slug: string;
  readonly description?: string;
  readonly scenario: string;
  readonly strategy: RetryStrategy;
  readonly principal: string;
  readonly tenant: string;
  readonly goal: string;
  /** The scenario's variables: the case input without principal and tenant. */
  readonly vars: Readonly<Record<string, unknown>>;
  readonly services: readonly ServiceName[];
  readonly accounts: readonly PlannedAccount[];
  /** Admin requests sent to the fresh services before the run. */
  readonly setup: readonly SetupRequest[];
  /** The policy the workers start with, with the case's rate limits (policy.rate_limit faults) applied. */
  readonly policy?: Policy;
  /** Run budgets the case sets (a continue_as_new fault sets maxHistoryEvents). */
  readonly budgets?: { readonly maxHistoryEvents?: number };
  readonly approver: Approver;
  readonly faults: readonly PlannedFault[];
  readonly probe?: Probe;
  readonly expect: readonly Expectation[];
  /** The case restarts the Temporal server, so it gets a dev server of its own. */
  readonly ownServer: boolean;
  /** LEDGERLOOP_CRASH_AT of the case's first worker process ('' when nothing fires in process). */
  readonly crashPlan: string;
  /** LEDGERLOOP_TRANSPORT_FAULTS of the first worker: the faults around function tools (empty: none). */
  readonly transportFaults: readonly TransportFault[];
  /** The first worker runs one activity at a time, so a paused process holds no extra activity polls. */
  readonly singleActivitySlot: boolean;
}

export interface Plan {
  readonly seed: number;
  readonly runDeadlineMs: number;
  readonly limits: AttemptLimits;
  readonly caps: {
    readonly modelAttemptMs: number;
    readonly toolAttemptMs: number;
    readonly reconcileAttemptMs: number;
  };
  readonly cases: readonly PlannedCase[];
  /** SHA-256 (first 16 hex) of the plan: equal seeds and files give equal fingerprints. */
  readonly fingerprint: string;
}

/** The services each scenario needs when the case does not say. */
export const SCENARIO_SERVICES: Readonly<Record<string, readonly ServiceName[]>> = {
  'order-fulfilment': ['inventory', 'wallet', 'shipping', 'orders'],
  'send-email': ['notifications'],
};

/** Default `ms` per fault kind and site, documented in docs/fault-protocol.md. */
function defaultMs(at: CrashPointName, kind: FaultKind): number {
  if (at === 'approval.expiry') return 4_000;
  if (kind === 'rate_limit') return 60_000;
  if (at === 'run.cancel' || at === 'run.message' || kind === 'continue_as_new') return 0;
  if (kind === 'pause') return 30_000;
  if (kind === 'kill' && at === 'downstream.before_commit') return 2_000;
  if (kind === 'kill' && at === 'downstream.after_commit') return 30_000;
  if (kind === 'restart_downstream') return 30_000;
  if (kind === 'restart_server') return 3_000;
  if (kind === 'delay') return 2_000;
  return 0;
}

function draw(v: number | { min: number; max: number } | undefined, fallback: number, prng: Prng): number {
  if (v === undefined) return fallback;
  return typeof v === 'number' ? v : prng.int(v.min, v.max);
}

/** The point a worker process fires for a fault, when it fires in process. */
export function inProcessPointOf(f: Pick<PlannedFault, 'at' | 'do'>): InProcessPoint | undefined {
  // Before the dispatch activity checks the authorization, not in front of the send: the wait must outlast it.
  if (f.at === 'approval.expiry') return 'tool.at_dispatch';
  const site = CRASH_POINTS[f.at].site;
  return site === 'workflow' || site === 'activity' ? (f.at as InProcessPoint) : undefined;
}

/** `tool.before_send:1:kill:0,...`: the LEDGERLOOP_CRASH_AT form the worker's crash-points module reads. */
export function crashPlanOf(faults: readonly PlannedFault[]): string {
  return faults
    .map((f) => {
      // A cancel or junk triggered at an in-process point: the first worker holds there until the runner has
      // acted (it releases the hold), TRIGGER_HOLD_MS at most.
      if (f.after !== undefined && POINT_TRIGGERS.includes(f.after))
        return `${f.after}:${f.occurrence}:hold:${TRIGGER_HOLD_MS}`;
      const point = inProcessPointOf(f);
      return point === undefined ? undefined : `${point}:${f.occurrence}:${f.do}:${f.ms}`;
    })
    .filter((s): s is string => s !== undefined)
    .join(',');
}

/** The first worker's faults around function tools (a downstream restart is the runner's act, not the worker's). */
export function transportFaultsOf(faults: readonly PlannedFault[]): TransportFault[] {
  return faults
    .filter((f) => f.via === 'worker' && f.do !== 'restart_downstream')
    .map((f) => workerFaultOf({ ...f, at: f.at as ToolPoint, tool: f.tool! }));
}

function slugOf(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 48) || 'case'
  );
}

function defaultAccounts(c: Case, services: readonly ServiceName[]): PlannedAccount[] {
  if (!services.includes('wallet')) return [];
  const currency = (c.input['amount'] as { currency?: unknown } | undefined)?.currency;
  const base = { balanceMinor: 1_000_000, currency: typeof currency === 'string' ? currency : 'EUR' };
  const out: PlannedAccount[] = [];
  if (typeof c.input['account'] === 'string')
    out.push({ tenant: c.input.tenant, account: c.input['account'], ...base });
  const foreign = c.input['foreignAccount'];
  if (typeof foreign === 'string') out.push({ tenant: 'globex', account: foreign, ...base });
  return out;
}

function planCase(p: FaultProtocol, c: Case, index: number, vocab: ProtocolVocabulary): PlannedCase {
  const prng = createPrng(p.seed, `case:${c.name}`);
  const faults: PlannedFault[] = c.faults.map((f) => {
    const at = f.at as CrashPointName;
    const kind = f.do;
    // Validated: a named tool has a target.
    const target = f.tool !== undefined ? vocab.tools.target(f.tool) : undefined;
    const path =
      target === undefined ? f.path : target.via === 'worker' || target.via === 'mcp' ? undefined : target.path;
    return {
      at,
      do: kind,
      occurrence: draw(f.occurrence, 1, prng),
      ms: draw(f.ms, defaultMs(at, kind), prng),
      times: f.times ?? 1,
      service: target?.service ?? f.service ?? vocab.defaultService,
      ...(path !== undefined ? { path } : {}),
      ...(target !== undefined ? { tool: f.tool!, via: target.via } : {}),
      ...(target?.via === 'proxy' ? { method: target.method } : {}),
      ...(target?.via === 'mcp' ? { mcpTool: target.mcpTool } : {}),
      ...(f.policy !== undefined ? { policy: f.policy } : {}),
      ...(kind === 'rate_limit' ? { per: f.per ?? 'run', max: f.max ?? 1, action: f.action ?? 'wallet.debit' } : {}),
      ...(at === 'run.cancel' || at === 'run.message' ? { after: f.after ?? 'ToolAttemptStarted' } : {}),
      ...(f.events !== undefined ? { events: f.events } : {}),
    };
  });
  // A project's case runs every service of the project unless it says otherwise.
  const builtin = vocab === BUILTIN_VOCABULARY;
  // Rate limits are part of the policy: the one the workers start with, and every version published later.
  const limits = faults.filter((f) => f.do === 'rate_limit');
  const limited = (p: Policy): Policy => withRateLimits(p, limits);
  const resolved = faults.map((f) => (f.policy && limits.length > 0 ? { ...f, policy: limited(f.policy) } : f));
  const policy = limits.length > 0 ? limited(c.policy ?? DEFAULT_POLICY) : c.policy;
  const budget = faults.find((f) => f.do === 'continue_as_new')?.events;
  const services = c.services ?? (builtin ? (SCENARIO_SERVICES[c.scenario] ?? ['wallet']) : vocab.services);
  const { principal, tenant, ...vars } = c.input;
  return {
    index,
    name: c.name,
    slug: slugOf(c.name),
    ...(c.description !== undefined ? { description: c.description } : {}),
    scenario: c.scenario,
    strategy: c.strategy,
    principal,
    tenant,
    goal: c.goal ?? `fault protocol case: ${c.name}`,
    vars,
    services,
    accounts: c.accounts ?? (builtin ? defaultAccounts(c, services) : []),
    setup: c.setup,
    ...(policy !== undefined ? { policy } : {}),
    ...(budget !== undefined ? { budgets: { maxHistoryEvents: budget } } : {}),
    approver: c.approver ?? { decision: 'approve', renew: false, afterMs: 0 },
    faults: resolved,
    ...(c.probe !== undefined ? { probe: c.probe } : {}),
    expect: c.expect,
    ownServer: faults.some((f) => f.do === 'restart_server'),
    crashPlan: crashPlanOf(faults),
    transportFaults: transportFaultsOf(faults),
    singleActivitySlot: faults.some((f) => f.do === 'pause'),
  };
}

/**
 * `policy` with each rate_limit fault's limit added to the rule of its action (a limit of the same scope is
 * replaced: a rule holds at most one per scope). A policy without a rule for the action is left as it is.
 */
export function withRateLimits(policy: Policy, limits: readonly PlannedFault[]): Policy {
  if (limits.length === 0) return policy;
  return {
    ...policy,
    rules: policy.rules.map((r) => {
      const mine = limits.filter((l) => l.action === r.action);
      if (mine.length === 0) return r;
      const existing = r.rateLimit === undefined ? [] : Array.isArray(r.rateLimit) ? r.rateLimit : [r.rateLimit];
      const added = mine.map((l) => ({ max: l.max ?? 1, perMs: l.ms, per: l.per ?? ('run' as const) }));
      const kept = existing.filter((e) => !added.some((a) => a.per === (e.per ?? 'principal')));
      return { ...r, rateLimit: [...kept, ...added] };
    }),
  };
}

/** Resolves a validated protocol into the plan the runner executes. Deterministic in (file, seed). */
export function planProtocol(p: FaultProtocol, vocab: ProtocolVocabulary = BUILTIN_VOCABULARY): Plan {
  const limits: AttemptLimits = { ...DEFAULT_LIMITS, ...p.attemptLimits };
  const caps = {
    modelAttemptMs: p.attemptTimeoutsMs?.model ?? 30_000,
    toolAttemptMs: p.attemptTimeoutsMs?.tool ?? 3_000,
    reconcileAttemptMs: p.attemptTimeoutsMs?.reconcile ?? 2_000,
  };
  const cases = p.cases.map((c, i) => planCase(p, c, i, vocab));
  const body = { seed: p.seed, runDeadlineMs: p.runDeadlineMs, limits, caps, cases };
  const fingerprint = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
  return { ...body, fingerprint };
}

/** Where a tool's fault is injected, as the plan names it. */
function siteOf(f: PlannedFault): string {
  if (f.via === 'worker') return 'its function';
  if (f.via === 'proxy') return `a proxy in front of ${f.service}`;
  if (f.via === 'mcp') return `the harness in front of MCP server ${f.service}, at ${f.mcpTool}`;
  return f.service;
}

/** One line per fault, as the printed plan shows it. */
export function describeFault(f: PlannedFault): string {
  const site = CRASH_POINTS[f.at].site;
  const on = f.tool !== undefined ? ` on ${f.tool} (${siteOf(f)})` : '';
  const where = on !== '' ? on : site === 'downstream' || site === 'network' ? ` on ${f.service}${f.path ?? ''}` : '';
  const ms = f.ms > 0 ? `, ${f.ms} ms` : '';
  const times = f.times > 1 ? ` x${f.times}` : '';
  const policy = f.policy ? ` -> ${f.policy.version}` : '';
  if (f.do === 'rate_limit') return `${f.at} -> rate_limit ${f.action}: max ${f.max} per ${f.ms} ms per ${f.per}`;
  if (f.do === 'continue_as_new') return `${f.at} -> continue_as_new (history budget ${f.events} events)`;
  if (f.after !== undefined) return `${f.at} -> ${f.do} (after ${f.after} #${f.occurrence}${ms})`;
  return `${f.at} -> ${f.do}${where} (hit ${f.occurrence}${times}${ms}${policy})`;
}

/** The plan as text: what runs, in which order, with which faults. */
export function formatPlan(plan: Plan): string {
  const lines = [
    `plan ${plan.fingerprint} · seed ${plan.seed} · run deadline ${plan.runDeadlineMs} ms · attempts model ${plan.limits.model}, tool ${plan.limits.tool}, reconcile ${plan.limits.reconcile}, compensation ${plan.limits.compensation}`,
  ];
  for (const c of plan.cases) {
    const server = c.ownServer ? ' · own Temporal server' : '';
    lines.push(`  ${c.index + 1}. ${c.name} · ${c.scenario} · ${c.strategy} · ${c.services.join('+')}${server}`);
    if (c.faults.length === 0) lines.push('       no injected fault');
    for (const f of c.faults) lines.push(`       ${describeFault(f)}: ${FAULT_KIND_SHORT[f.do]}`);
    if (c.probe) lines.push(`       probe: ${c.probe.kind} ${JSON.stringify(c.probe.changes)}`);
  }
  return lines.join('\n');
}
