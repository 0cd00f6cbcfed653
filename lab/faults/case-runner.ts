/**
 * Runs one planned case against fresh processes: its own downstream services (fresh databases), its own worker
 * processes (the first carries the crash plan), a task queue of its own, and for a server-restart case a Temporal
 * dev server of its own. Drivers act while the run is in flight; afterwards every metric is read from durable
 * records (evidence.ts), the assertions are evaluated, and the write-up is generated.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { startAgentRun } from '../../host/client/runs';
import type { LedgerEvent } from '../../src/domain/ledger-events';
import type { ArmedFaultState } from '../../src/downstream/protocol';
import type { AgentRunResult } from '../../src/domain/run';
import { QUOTA_DB_ENV } from '../../src/stores/quota-store';
import { DEFAULT_POLICY } from '../../src/domain/policy-format';
import { getFreePorts, type DevServer } from '../../host/server/dev-server';
import { evaluateExpectations, type AssertionFailure } from './assertions';
import { CRASH_POINTS } from './catalog';
import { approver } from './approver';
import {
  armDownstream,
  cancelRun,
  downstreamKill,
  sendJunk,
  inFlightHold,
  pauseAndResume,
  serverRestart,
  type DriverContext,
} from './drivers';
import { LedgerWatch } from './ledger-watch';
import { mcpCallsAtServers, mcpFired, mcpKill, prepareMcpFaults } from './mcp-drivers';
import { MCP_FAULTS_ENV, type McpServerFaults } from './mcp-tool-faults';
import { withDeadline } from './waits';
import { collectEvidence, type CallRow } from './evidence';
import type { InvariantViolation } from './explore-invariants';
import { publishPolicy, startCaseServices, startOwnServer, type CaseServices, type Lab, type ServerLink } from './lab';
import type { CaseMetrics } from './metrics';
import { describeFault, inProcessPointOf, type Plan, type PlannedCase, type PlannedFault } from './plan';
import { startNetHold, type NetHold } from './net-hold';
import { runProbe, type ProbeResult } from './probe';
import { Timeline, type TimelineEvent } from './timeline';
import { PhaseClock } from './phases';
import { WorkerPool } from './worker-pool';
import { downstreamRestart, proxyFired, proxyKill, startCaseProxies, type CaseProxies } from './tool-drivers';
import { FAULTS_MEMO_KEY } from './workflows/hook';
import { labWriteUp } from './writeup';

export interface CaseResult {
  readonly name: string;
  readonly passed: boolean;
  readonly metrics: Partial<CaseMetrics>;
  readonly failures: readonly AssertionFailure[];
  readonly writeup: readonly string[];
  readonly faults: readonly string[];
  readonly calls: readonly CallRow[];
  /** The universal invariants the run's records violate (explore-invariants.ts); empty when they all held. */
  readonly invariants?: readonly InvariantViolation[];
  readonly timeline: readonly TimelineEvent[];
  readonly workflowId?: string;
  readonly durationMs: number;
  /** Planned faults, and those that observably happened (countFired); `missedFaults` describes the rest. */
  readonly faultsPlanned?: number;
  readonly faultsFired?: number;
  readonly missedFaults?: readonly string[];
  /** Per planned fault, in the plan's order: whether it observably happened (what the coverage table counts). */
  readonly firedEach?: readonly boolean[];
  /** The runner itself failed (a process did not start, the server could not be read). */
  readonly error?: string;
  /** Wall time per phase of the case (stack start, worker start, the run, evidence...), in ms (phases.ts). */
  readonly phasesMs?: Readonly<Record<string, number>>;
}

/**
 * The workers' variable naming the case's own directory (fresh for every case): where a project's MCP servers keep
 * their storage (a project's `mcp` module reads it), so no case sees another's files.
 */
export const CASE_DIR_ENV = 'LEDGERLOOP_CASE_DIR';

/** Extra time past the run deadline before the case gives up on the run and terminates it. */
const GRACE_MS = 20_000;

async function awaitResult(
  link: ServerLink,
  handle: WorkflowHandle,
  untilMs: number,
): Promise<{ result?: AgentRunResult; completed: boolean; note?: string }> {
  while (Date.now() < untilMs) {
    try {
      const result = (await withDeadline(link, Math.max(1_000, untilMs - Date.now()), () =>
        handle.result(),
      )) as AgentRunResult;
      return { result, completed: true };
    } catch (err) {
      if (err instanceof WorkflowFailedError)
        return { completed: false, note: `the workflow failed: ${err.cause?.message ?? err.message}` };
      await sleep(500); // the server may be restarting
    }
  }
  return { completed: false, note: 'the run did not finish before its deadline plus grace' };
}

/**
 * How many planned faults observably happened, each from its own evidence: a crash point's line in the timeline
 * (in-process points), the service's own count of the requests an armed rule acted on (downstream points), the
 * rebuilt ledger (a rate limit deferred a dispatch; the run continued as new), the MCP harness's record, or the
 * runner's act on the live run (kills, restarts, cancels, junk messages).
 */
export async function countFired(
  pc: PlannedCase,
  timeline: Timeline,
  services: CaseServices,
  armed: ReadonlyMap<PlannedFault, string>,
  events: readonly LedgerEvent[],
  proxies?: CaseProxies,
  mcp: Readonly<Record<string, McpServerFaults>> = {},
): Promise<{ fired: number; missed: PlannedFault[]; each: boolean[] }> {
  const missed: PlannedFault[] = [];
  const each: boolean[] = [];
  const states = new Map<string, readonly ArmedFaultState[]>();
  for (const f of pc.faults) {
    const point = inProcessPointOf(f);
    let fired: boolean;
    if (point !== undefined) {
      fired = timeline.events.some((e) => e.kind === 'crash_point' && e.point === point && e.hit === f.occurrence);
    } else if (f.do === 'rate_limit') {
      fired = events.some((e) => e.type === 'DispatchDeferred');
    } else if (f.do === 'continue_as_new') {
      fired = events.some((e) => e.type === 'LedgerCarriedForward');
    } else if (f.via === 'worker' && f.do !== 'restart_downstream') {
      // The worker's own line: it ran (or skipped) the function and acted on its answer.
      fired = timeline.events.some(
        (e) => e.kind === 'fault_fired' && e.point === f.at && e.action === f.do && e.tool === f.tool,
      );
    } else if (f.via === 'mcp') {
      // The harness's own line: its rule fired on a call of the tool (a kill's once the answer was held).
      fired = mcpFired(mcp, f);
    } else if (f.via === 'proxy' && f.do !== 'kill' && f.do !== 'restart_downstream') {
      fired = proxies !== undefined && proxyFired(proxies, f);
    } else if (CRASH_POINTS[f.at].site === 'downstream' && f.do !== 'kill' && f.do !== 'restart_downstream') {
      const id = armed.get(f);
      if (!states.has(f.service)) {
        states.set(
          f.service,
          (await services.byName
            .get(f.service)
            ?.client.faultStates()
            .catch(() => [])) ?? [],
        );
      }
      fired = (states.get(f.service) ?? []).some((r) => r.id === id && r.fired > 0);
    } else {
      fired = timeline.events.some(
        (e) => e.kind === 'fault_fired' && e.point === f.at && (e.action === undefined || e.action === f.do),
      );
    }
    each.push(fired);
    if (!fired) missed.push(f);
  }
  return { fired: pc.faults.length - missed.length, missed, each };
}

const QUIET: ReadonlySet<string> = new Set(['crash_point_hit', 'fault_armed']);

/**
 * Runs one case; never throws (a runner failure is a failed case with `error`). Its `durationMs` is the whole
 * wall time, the stopping of its processes included; `phasesMs` says where it went.
 */
export async function runCase(lab: Lab, plan: Plan, pc: PlannedCase, say: (m: string) => void): Promise<CaseResult> {
  const started = Date.now();
  const phases = new PhaseClock();
  const r = await runCaseTimed(lab, plan, pc, say, phases);
  return { ...r, durationMs: Date.now() - started, phasesMs: phases.snapshot() };
}

async function runCaseTimed(
  lab: Lab,
  plan: Plan,
  pc: PlannedCase,
  say: (m: string) => void,
  phases: PhaseClock,
): Promise<Omit<CaseResult, 'durationMs'>> {
  const dir = path.join(lab.dataDir, 'cases', `${pc.index + 1}-${pc.slug}`);
  mkdirSync(dir, { recursive: true });
  let ledger: LedgerWatch | undefined;
  const timeline = new Timeline((e) => {
    if (!QUIET.has(e.kind)) say(`      ${(e.t / 1000).toFixed(1).padStart(5)}s ${e.text}`);
    if (e.kind === 'crash_point' && (e.action === 'kill' || e.action === 'pause')) ledger?.freezeAtCrash(e.ledger);
  });
  const faults = pc.faults.map(describeFault);
  const done = new AbortController();
  let own: (ServerLink & { server: DevServer }) | undefined;
  let restarted: DevServer | undefined;
  let services: CaseServices | undefined;
  let pool: WorkerPool | undefined;
  let workflowId: string | undefined;
  const holds = new Map<PlannedFault, NetHold>();
  let proxies: CaseProxies | undefined;
  let mcp: Record<string, McpServerFaults> = {};
  try {
    own = pc.ownServer ? await phases.time('own_server', () => startOwnServer(lab, dir)) : undefined;
    const link = own ?? lab.shared;
    // Ports picked up front, so the services and the first worker (which must know their URLs) start together.
    const ports = await getFreePorts(pc.services.length);
    const urls: Record<string, string> = Object.fromEntries(
      pc.services.map((name, i) => [name, `http://127.0.0.1:${ports[i]}`]),
    );
    const needsPolicyFile = pc.policy !== undefined || pc.faults.some((f) => f.do === 'publish_policy');
    const policyFile = needsPolicyFile ? path.join(dir, 'policy.json') : undefined;
    // Every case its own cross-run rate-limit windows: a window one case filled never holds back the next.
    const quotaDb = path.join(dir, 'quota.sqlite');
    if (policyFile) publishPolicy(policyFile, pc.policy ?? DEFAULT_POLICY);
    const workerUrls: Record<string, string> = { ...urls };
    for (const f of pc.faults.filter((x) => x.at === 'tool.in_flight')) {
      const target = urls[f.service];
      if (!target) throw new Error(`case "${pc.name}": tool.in_flight names ${f.service}, which the case does not run`);
      const hold = await startNetHold(target, { occurrence: f.occurrence, ...(f.path ? { path: f.path } : {}) });
      holds.set(f, hold);
      workerUrls[f.service] = hold.url;
    }
    // An HTTP tool's faults: its workers reach the API through a loopback proxy that injects them.
    proxies = await startCaseProxies(pc, urls);
    for (const [name, proxy] of proxies.byService) workerUrls[name] = proxy.url;
    // An MCP tool's faults: every worker starts the faulted servers behind the harness, its records in the case.
    mcp = prepareMcpFaults(pc, dir);
    const mcpEnv: Record<string, string> = Object.keys(mcp).length > 0 ? { [MCP_FAULTS_ENV]: JSON.stringify(mcp) } : {};
    const taskQueue = `faults-${pc.index + 1}-${pc.slug}-${Date.now().toString(36)}`;
    pool = new WorkerPool({
      address: link.server.address,
      taskQueue,
      services: workerUrls,
      bundlePath: lab.bundlePath,
      // The lab's worker env allows blind_retry: the lab runs it on purpose.
      env: {
        ...lab.workerEnv,
        [QUOTA_DB_ENV]: quotaDb,
        // The case's own directory: a project's MCP servers keep their storage there (fresh for every case).
        [CASE_DIR_ENV]: dir,
        ...mcpEnv,
        ...(policyFile ? { LEDGERLOOP_POLICY_FILE: policyFile } : {}),
      },
      timeline,
    });
    const [svc, first] = await phases.time('start', () =>
      Promise.allSettled([
        phases.time('start.services', () => startCaseServices(lab, pc, dir, ports)),
        phases.time('start.worker', () => pool!.startFirst(pc.crashPlan, pc.singleActivitySlot, pc.transportFaults)),
      ]),
    );
    if (svc.status === 'rejected') throw svc.reason;
    const caseServices = svc.value;
    services = caseServices;
    if (first.status === 'rejected') throw first.reason;
    const armed = await phases.time('arm', () => armDownstream({ pc, services: caseServices, timeline }));
    workflowId = `faults-${plan.seed}-${pc.index + 1}-${pc.slug}-${Date.now().toString(36)}`;
    const startRun = Date.now();
    const handle = await startAgentRun(link.client, {
      workflowId,
      taskQueue,
      memo: { [FAULTS_MEMO_KEY]: true },
      identityToken: await lab.identity.issueFor({ purpose: 'start', run: workflowId }, pc.principal, pc.tenant),
      input: {
        principal: { id: pc.principal, tenant: pc.tenant },
        goal: pc.goal,
        strategy: pc.strategy,
        planner: { kind: 'scripted', scenario: pc.scenario, vars: pc.vars },
        deadlineAt: new Date(Date.now() + plan.runDeadlineMs).toISOString(),
        limits: plan.limits,
        caps: plan.caps,
        ...(pc.budgets ? { budgets: pc.budgets } : {}),
      },
    });
    phases.add('start_run', Date.now() - startRun);
    ledger = new LedgerWatch(link, handle);
    const ctx: DriverContext = {
      pc,
      link,
      handle,
      services: caseServices,
      pool,
      timeline,
      ledger,
      approverToken: (call) =>
        lab.identity.issueFor({ purpose: 'approve', run: workflowId!, call }, 'faults:approver', pc.tenant, [
          'approver',
        ]),
      cancelToken: () => lab.identity.issueFor({ purpose: 'cancel', run: workflowId! }, pc.principal, pc.tenant),
      ...(policyFile ? { policyFile } : {}),
      done: done.signal,
      onServerRestarted: (s) => (restarted = s),
    };
    // Each driver's failure is caught the moment it happens and written to the timeline: the drivers are awaited
    // only once the run is over, and a rejection nobody handles before then would stop the whole runner.
    const drivers: Promise<void>[] = [];
    const drive = (name: string, p: Promise<void>): void => {
      drivers.push(
        p.catch((err: unknown) => {
          timeline.push({ kind: 'note', text: `the ${name} driver failed: ${(err as Error)?.message ?? String(err)}` });
        }),
      );
    };
    drive('ledger watch', ledger.poll(done.signal));
    drive('approver', approver(ctx));
    for (const f of pc.faults) {
      // A function tool's kill is the worker's own (around the function); an HTTP tool's waits on the proxy, an MCP
      // tool's on the harness. An MCP server's restart is the harness's (the worker starts the server again).
      if (f.via === 'mcp') {
        if (f.do === 'kill') drive(f.at, mcpKill(ctx, mcp, f));
        continue;
      }
      if (f.do === 'kill' && CRASH_POINTS[f.at].site === 'downstream' && f.via === 'proxy')
        drive(f.at, proxyKill(ctx, proxies, f));
      else if (f.do === 'kill' && CRASH_POINTS[f.at].site === 'downstream' && f.via !== 'worker')
        drive(f.at, downstreamKill(ctx, f));
      if (f.do === 'restart_downstream') drive(f.at, downstreamRestart(ctx, f));
      if (f.do === 'restart_server') drive(f.at, serverRestart(ctx, f));
      if (f.at === 'run.cancel') drive(f.at, cancelRun(ctx, f));
      if (f.at === 'run.message') drive(f.at, sendJunk(ctx, f));
      const hold = holds.get(f);
      if (hold) drive(f.at, inFlightHold(ctx, f, hold));
      else if (f.do === 'pause') drive(f.at, pauseAndResume(ctx, f));
    }
    const runStarted = Date.now();
    const outcome = await awaitResult(link, handle, Date.now() + plan.runDeadlineMs + GRACE_MS);
    phases.add('run', Date.now() - runStarted);
    if (outcome.note) timeline.push({ kind: 'note', text: outcome.note });
    if (!outcome.completed)
      await handle.terminate('fault protocol: the case gave up on this run').catch(() => undefined);
    // without a fault: the final ledger as the original worker holds it
    await phases.time('freeze', () => ledger!.freezeNow());
    done.abort();
    await phases.time('drivers_settle', () =>
      Promise.race([Promise.allSettled(drivers), sleep(30_000, undefined, { ref: false })]),
    );
    let probe: ProbeResult | undefined;
    if (pc.probe) {
      const p = pc.probe;
      probe = await phases.time('probe', () => runProbe(lab, link, handle, caseServices, p));
      timeline.push({ kind: 'probe_sent', text: `probe: ${probe.text}` });
    }
    await phases.time('workers_stop', () => pool!.stopAll());
    const evidence = await collectEvidence({
      phases,
      lab,
      link,
      taskQueue,
      handle,
      services: caseServices,
      ...(ledger.frozen ? { before: ledger.frozen } : {}),
      ...(outcome.result ? { result: outcome.result } : {}),
      completed: outcome.completed,
      faultsFired: 0, // counted below, from the rebuilt ledger among others
      mcpCalls: mcpCallsAtServers(mcp),
      probeOutcome: probe?.outcome ?? '',
      strategy: pc.strategy,
    });
    const fired = await phases.time('count_fired', () =>
      countFired(pc, timeline, caseServices, armed, evidence.rebuilt?.events ?? [], proxies, mcp),
    );
    evidence.metrics.faults_fired = fired.fired;
    const failures = evaluateExpectations(pc.name, pc.expect, evidence.metrics);
    for (const f of fired.missed) {
      failures.push({
        metric: 'faults_fired',
        op: '==',
        expected: pc.faults.length,
        observed: fired.fired,
        message: `case "${pc.name}": the planned fault ${describeFault(f)} never fired (the run never reached that point), so the case proves nothing about it`,
      });
    }
    if (evidence.rebuildRetried)
      timeline.push({ kind: 'note', text: `a first new worker could not rebuild: ${evidence.rebuildRetried}` });
    if (evidence.replayError) timeline.push({ kind: 'note', text: `replay: ${evidence.replayError}` });
    const writeup = labWriteUp({ pc, evidence, timeline, failures, ...(probe ? { probe } : {}) });
    return {
      name: pc.name,
      passed: failures.length === 0,
      metrics: evidence.metrics,
      failures,
      writeup,
      faults,
      calls: evidence.calls,
      invariants: evidence.invariants,
      timeline: timeline.events,
      workflowId,
      faultsPlanned: pc.faults.length,
      faultsFired: fired.fired,
      missedFaults: fired.missed.map(describeFault),
      firedEach: fired.each,
    };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    const failure: AssertionFailure = {
      metric: 'completed',
      op: '==',
      expected: true,
      observed: null,
      message: `case "${pc.name}": the runner failed: ${error}`,
    };
    return {
      name: pc.name,
      passed: false,
      metrics: {},
      failures: [failure],
      writeup: [failure.message],
      faults,
      calls: [],
      timeline: timeline.events,
      ...(workflowId ? { workflowId } : {}),
      error,
    };
  } finally {
    done.abort();
    const cleanup = Date.now();
    await pool?.stopAll().catch(() => undefined);
    await services?.stop().catch(() => undefined);
    for (const h of holds.values()) await h.close().catch(() => undefined);
    await proxies?.close();
    if (own) {
      await own.connection.close().catch(() => undefined);
      await (restarted ?? own.server).stop().catch(() => undefined);
    }
    phases.add('cleanup', Date.now() - cleanup);
  }
}
