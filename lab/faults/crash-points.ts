/**
 * In-process crash points. A worker process reads its crash plan from LEDGERLOOP_CRASH_AT, e.g.
 *
 *   LEDGERLOOP_CRASH_AT=tool.before_send:1:pause:30000,tool.after_response:2:kill:0
 *
 * (point:occurrence:action:ms, comma-separated), counts the hits of every named point, and on the planned hit
 * acts on ITSELF with a real signal: `kill` is SIGKILL, `pause` is SIGSTOP (the fault runner sends SIGCONT),
 * `delay` sleeps `ms`, `hold` waits there until the runner releases it (a line `{"release":point,"hit":n}` on
 * stdin, once it has acted: a cancel or junk triggered by the point) or `ms` passes. Before acting it writes one
 * JSON line to stdout, so the runner knows what happened; with a plan set, every hit is reported the same way.
 * Without the variable every hook is a no-op.
 */
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityInterceptorsFactory, InjectedSinks, WorkerPlugin } from '@temporalio/worker';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { DownstreamClient, type Downstream, type DownstreamClientOptions } from '../../src/downstream/client';
import type { AnyTool } from '../../src/domain/tool';
import { transportOf } from '../../src/domain/transport';
import type { Transport } from '../../src/downstream/transport';
import { faultyTransports, parseTransportFaults, TRANSPORT_FAULTS_ENV } from './transport-faults';
import { packageModule } from '../../src/package-paths';
import { builtinTools } from '../../src/tools/registry';
import { IN_PROCESS_POINTS, type InProcessPoint } from './catalog';
import type { FaultSinks, LedgerMark } from './workflows/hook';

export const CRASH_PLAN_ENV = 'LEDGERLOOP_CRASH_AT';

export type InProcessAction = 'kill' | 'pause' | 'delay' | 'hold';

export interface CrashRule {
  readonly point: InProcessPoint;
  readonly occurrence: number;
  readonly action: InProcessAction;
  readonly ms: number;
}

/** What a worker process writes to stdout at a crash point (one JSON object per line). */
export type CrashPointLine =
  | { readonly crashPointHit: InProcessPoint; readonly hit: number; readonly pid: number }
  | {
      readonly crashPoint: InProcessPoint;
      readonly do: InProcessAction;
      readonly hit: number;
      readonly pid: number;
      /** The ledger of the point's run as this worker last began an activation of it: what a fresh worker rebuilds. */
      readonly ledger?: LedgerMark;
    }
  | { readonly crashPointResumed: InProcessPoint; readonly hit: number; readonly pid: number };

/** What the runner writes to a worker's stdin to end a `hold` (one JSON object per line). */
export interface ReleaseLine {
  readonly release: InProcessPoint;
  readonly hit: number;
}

export class CrashPlanError extends Error {
  override readonly name = 'CrashPlan.Invalid';
}

/** Parses the LEDGERLOOP_CRASH_AT form; throws CrashPlanError naming the bad entry. */
export function parseCrashPlan(text: string): CrashRule[] {
  if (text.trim() === '') return [];
  return text.split(',').map((entry) => {
    const [point, occurrence, action, ms] = entry.trim().split(':');
    if (!IN_PROCESS_POINTS.includes(point as InProcessPoint)) {
      throw new CrashPlanError(`${CRASH_PLAN_ENV}: "${entry}": unknown point; known: ${IN_PROCESS_POINTS.join(', ')}`);
    }
    const n = Number(occurrence);
    const wait = Number(ms ?? '0');
    if (!Number.isInteger(n) || n < 1) throw new CrashPlanError(`${CRASH_PLAN_ENV}: "${entry}": bad occurrence`);
    if (action !== 'kill' && action !== 'pause' && action !== 'delay' && action !== 'hold') {
      throw new CrashPlanError(`${CRASH_PLAN_ENV}: "${entry}": action must be kill, pause, delay or hold`);
    }
    if (!Number.isInteger(wait) || wait < 0) throw new CrashPlanError(`${CRASH_PLAN_ENV}: "${entry}": bad ms`);
    return { point: point as InProcessPoint, occurrence: n, action, ms: wait };
  });
}

let loaded: { rules: readonly CrashRule[]; hits: Map<InProcessPoint, number> } | null | undefined;

function plan(): { rules: readonly CrashRule[]; hits: Map<InProcessPoint, number> } | null {
  if (loaded === undefined) {
    const text = process.env[CRASH_PLAN_ENV];
    loaded = text === undefined || text.trim() === '' ? null : { rules: parseCrashPlan(text), hits: new Map() };
  }
  return loaded;
}

function announce(line: CrashPointLine): void {
  writeSync(1, `${JSON.stringify(line)}\n`);
}

/** Each run's ledger as this worker last began an activation of it (the lab bundle's interceptor reports it). */
const ledgerMarks = new Map<string, LedgerMark>();

/** The workflow id of the activity this runs in, if any. */
function activityWorkflowId(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined; // not inside an activity
  }
}

/**
 * Passes the named point: counts the hit and, when the plan says so, kills, stops or delays this process. The line
 * that announces the act carries the ledger mark of the point's run (`workflowId`), so the runner knows the
 * projection a fresh worker must rebuild without racing a query against the kill.
 */
export async function crashPoint(point: InProcessPoint, workflowId = activityWorkflowId()): Promise<void> {
  const p = plan();
  if (p === null) return;
  const hit = (p.hits.get(point) ?? 0) + 1;
  p.hits.set(point, hit);
  const pid = process.pid;
  announce({ crashPointHit: point, hit, pid });
  for (const rule of p.rules) {
    if (rule.point !== point || rule.occurrence !== hit) continue;
    const ledger = workflowId === undefined ? undefined : ledgerMarks.get(workflowId);
    announce({ crashPoint: point, do: rule.action, hit, pid, ...(ledger ? { ledger } : {}) });
    if (rule.action === 'kill') {
      process.kill(pid, 'SIGKILL');
      await new Promise<never>(() => undefined);
    } else if (rule.action === 'pause') {
      process.kill(pid, 'SIGSTOP'); // the whole process stops here, until the runner sends SIGCONT
      announce({ crashPointResumed: point, hit, pid });
    } else if (rule.action === 'hold') {
      await released(point, hit, rule.ms);
      announce({ crashPointResumed: point, hit, pid });
    } else {
      await sleep(rule.ms);
    }
  }
}

/** Releases the runner sent (`point#hit`), and the holds waiting for one. */
const releases = new Set<string>();
const holding = new Map<string, () => void>();
let listening = false;

/** Resolves once the runner releases `point`'s `hit` on stdin, or after `ms` (a runner that never acts). */
function released(point: InProcessPoint, hit: number, ms: number): Promise<void> {
  const key = `${point}#${hit}`;
  if (!listening) {
    listening = true;
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as Partial<ReleaseLine>;
        const k = `${String(msg.release)}#${String(msg.hit)}`;
        releases.add(k);
        holding.get(k)?.();
      } catch {
        /* not a release */
      }
    });
    // stdin never keeps the worker alive (a worker spawned without a pipe holds for `ms`)
    (process.stdin as { unref?: () => void }).unref?.();
  }
  if (releases.has(key)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      holding.delete(key);
      resolve();
    };
    const timer = setTimeout(done, ms);
    holding.set(key, done);
  });
}

let compensating: ReadonlySet<string> | undefined;

/** Tools that some other tool names as its compensation (wallet_refund, inventory_release, shipping_cancel). */
export function compensatingTools(): ReadonlySet<string> {
  if (compensating === undefined) {
    const names = new Set<string>();
    for (const name of builtinTools.names()) {
      const comp = builtinTools.get(name)?.compensation;
      if (comp?.kind === 'compensate') names.add(comp.tool);
    }
    compensating = names;
  }
  return compensating;
}

let compensatingRouteSet: ReadonlySet<string> | undefined;

/** `service route` of every compensating tool (`wallet /v1/refunds`, ...): how a send is told to be one. */
function compensatingRoutes(): ReadonlySet<string> {
  if (compensatingRouteSet === undefined) {
    const routes = new Set<string>();
    for (const name of compensatingTools()) {
      const tool = builtinTools.get(name);
      if (tool !== undefined) routes.add(`${tool.service} ${tool.route}`);
    }
    compensatingRouteSet = routes;
  }
  return compensatingRouteSet;
}

/**
 * A downstream client that passes the dispatch crash points around each send: `<family>.before_send` just before
 * the request leaves (nothing sent yet), `<family>.after_response` as soon as its answer is in (the activity has
 * not completed). The family is `compensation` for a compensating tool's route, else `tool`, so the saga's
 * dispatches reach their own crash points. Lookups and the contract pass through untouched.
 */
export function crashPointClient(service: string, inner: Downstream): Downstream {
  const routes = compensatingRoutes();
  return {
    async send(path, body, options) {
      const family = routes.has(`${service} ${path}`) ? 'compensation' : 'tool';
      await crashPoint(`${family}.before_send`);
      const sent = await inner.send(path, body, options);
      await crashPoint(`${family}.after_response`);
      return sent;
    },
    lookup: (key, options) => inner.lookup(key, options),
    contract: () => inner.contract(),
  };
}

/**
 * The same dispatch crash points around a tool's send on any other transport (a function, an HTTP API): a
 * Ledgerloop service's sends pass them in its client (`crashPointClient`), so its transport is left as it is. A
 * compensation's attempt (the saga's own call, provider call id `saga`) passes `compensation.*`.
 */
export function crashPointTransport(tool: AnyTool, inner: Transport): Transport {
  if (transportOf(tool).kind === 'ledgerloop') return inner;
  return {
    async send(call) {
      const family = call.intent.providerCallId === 'saga' ? 'compensation' : 'tool';
      await crashPoint(`${family}.before_send`);
      const sent = await inner.send(call);
      await crashPoint(`${family}.after_response`);
      return sent;
    },
    lookup: (call) => inner.lookup(call),
    retention: () => inner.retention(),
  };
}

/** The fault lab's workers carry its crash points (`"1"`), with or without a plan that fires. */
export const CRASH_POINTS_ENV = 'LEDGERLOOP_CRASH_POINTS';

/**
 * Whether a worker process installs the crash points: with a crash plan (LEDGERLOOP_CRASH_AT) or
 * LEDGERLOOP_CRASH_POINTS=1. Neither is set for a production worker, which then has no probe and no sink.
 */
export function crashPointsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    (env[CRASH_PLAN_ENV] ?? '').trim() !== '' ||
    (env[TRANSPORT_FAULTS_ENV] ?? '').trim() !== '' ||
    env[CRASH_POINTS_ENV] === '1'
  );
}

/** The lab's workflow interceptor module (the `workflow.before_intent` crash point): only the lab's bundle has it. */
export const FAULT_WORKFLOW_INTERCEPTORS_MODULE = packageModule('lab', 'faults', 'workflows', 'interceptors');

/**
 * What a lab worker installs (lab/worker-main.ts) through the worker's public options: its downstream clients
 * wrapped with the dispatch crash points (`crashPointClient`), and a Temporal worker plugin that registers the sink
 * the lab bundle's workflow interceptor calls, plus that interceptor when the worker bundles in process (a
 * prebuilt lab bundle already carries it). A crash plan that does not parse stops the worker here, not at its
 * first crash point.
 */
export function crashPointWorkerOptions(env: NodeJS.ProcessEnv = process.env): {
  readonly downstreamClient: (service: string, options: DownstreamClientOptions) => Downstream;
  readonly wrapTransport: (tool: AnyTool, transport: Transport) => Transport;
  readonly plugins: readonly WorkerPlugin[];
} {
  parseCrashPlan(env[CRASH_PLAN_ENV] ?? '');
  // Transport faults (lab/faults/transport-faults.ts) wrap the team's function or request, inside the crash points.
  const faulty = faultyTransports(parseTransportFaults(env[TRANSPORT_FAULTS_ENV]));
  return {
    downstreamClient: (service, options) => crashPointClient(service, new DownstreamClient(options)),
    wrapTransport: (tool, transport) => crashPointTransport(tool, faulty(tool, transport)),
    plugins: [crashPointPlugin],
  };
}

/**
 * `tool.at_dispatch`: a tool's dispatch activity has started and has checked, signed and sent nothing yet (a
 * compensating route does not count). A wait here outlasts the authorization the activity is about to check, as a
 * slow queue would: the activity must find it lapsed and send nothing (the `approval.expiry` fault).
 */
const atDispatch: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      if (ctx.info.activityType === 'dispatchTool') {
        const req = input.args[0] as DispatchRequest | undefined;
        if (req !== undefined && !compensatingRoutes().has(`${req.service} ${req.route}`))
          await crashPoint('tool.at_dispatch', ctx.info.workflowExecution?.workflowId);
      }
      return next(input);
    },
  },
});

/**
 * The worker plugin of the crash points: the fault sink, the `tool.at_dispatch` activity interceptor, and the
 * workflow interceptor when bundling.
 */
export const crashPointPlugin: WorkerPlugin = {
  name: 'ledgerloop-lab-crash-points',
  configureWorker(options) {
    const bundling = options.workflowBundle === undefined;
    const modules = options.interceptors?.workflowModules ?? [];
    return {
      ...options,
      sinks: { ...options.sinks, ...FAULT_SINKS },
      interceptors: {
        ...options.interceptors,
        activity: [...(options.interceptors?.activity ?? []), atDispatch],
        ...(bundling ? { workflowModules: [...modules, FAULT_WORKFLOW_INTERCEPTORS_MODULE] } : {}),
      },
    };
  },
};

/** Sinks a worker registers so `workflowCrashPoint` reaches this process (a no-op without a crash plan). */
export const FAULT_SINKS: InjectedSinks<FaultSinks> = {
  ledgerloopFaults: {
    crashPoint: { fn: (info, point) => crashPoint(point, info.workflowId) },
    ledgerMark: { fn: (info, mark) => void ledgerMarks.set(info.workflowId, mark) },
  },
};
