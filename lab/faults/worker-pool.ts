/**
 * The worker processes of one case. The first one carries the case's crash plan; whenever a worker dies (a kill,
 * planned or not) or stops itself (a pause), a fresh process without a plan takes over, as an operator's process
 * manager would start one. Every crash-point line a worker prints goes to the timeline.
 */
import { createInterface } from 'node:readline';
import { spawnWorker, type WorkerProcess } from '../spawn-worker';
import type { InProcessPoint } from './catalog';
import { CRASH_PLAN_ENV, CRASH_POINTS_ENV, type CrashPointLine, type ReleaseLine } from './crash-points';
import type { Timeline, TimelineEvent } from './timeline';
import { TRANSPORT_FAULTS_ENV, type TransportFault, type TransportFaultLine } from './transport-faults';

export interface WorkerPoolOptions {
  readonly address: string;
  readonly taskQueue: string;
  readonly services: Readonly<Record<string, string>>;
  readonly bundlePath: string;
  /** Environment every worker of the case gets (capability key, policy file). */
  readonly env: Readonly<Record<string, string>>;
  readonly timeline: Timeline;
}

export interface PoolWorker {
  readonly proc: WorkerProcess;
  readonly role: 'first' | 'replacement';
  alive: boolean;
  stopped: boolean;
}

/** Every pool not yet stopped, so an interrupted runner can kill its workers (see `killAllWorkersNow`). */
const openPools = new Set<WorkerPool>();

/** SIGKILLs every worker of every open pool, synchronously (for SIGINT/SIGTERM handlers). */
export function killAllWorkersNow(): void {
  for (const pool of openPools) for (const w of pool.workers) if (w.alive) w.proc.child.kill('SIGKILL');
}

/** Spawns, replaces and finally stops the case's workers. */
export class WorkerPool {
  readonly workers: PoolWorker[] = [];
  private closing = false;
  private replacing: Promise<void> = Promise.resolve();

  constructor(private readonly opts: WorkerPoolOptions) {
    openPools.add(this);
  }

  /** Starts the first worker with `crashPlan` (LEDGERLOOP_CRASH_AT) and, if asked, a single activity slot. */
  async startFirst(
    crashPlan: string,
    singleActivitySlot: boolean,
    transportFaults: readonly TransportFault[] = [],
  ): Promise<PoolWorker> {
    const env: Record<string, string> = { ...this.opts.env };
    if (crashPlan) env[CRASH_PLAN_ENV] = crashPlan;
    if (transportFaults.length > 0) env[TRANSPORT_FAULTS_ENV] = JSON.stringify(transportFaults);
    if (singleActivitySlot) env['LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES'] = '1';
    return this.spawn('first', env);
  }

  /** Workers that are running (not dead, not stopped). */
  live(): PoolWorker[] {
    return this.workers.filter((w) => w.alive && !w.stopped);
  }

  /** A worker by pid. */
  byPid(pid: number): PoolWorker | undefined {
    return this.workers.find((w) => w.proc.pid === pid);
  }

  /** Starts a replacement unless one is already running or the case is closing. */
  ensureReplacement(reason: string): Promise<void> {
    this.replacing = this.replacing.then(async () => {
      if (this.closing || this.live().length > 0) return;
      this.opts.timeline.push({ kind: 'note', text: `starting a fresh worker process: ${reason}` });
      await this.spawn('replacement', { ...this.opts.env });
    });
    return this.replacing;
  }

  /** SIGKILL by the runner (the downstream-held kill, the opening failure). */
  async kill(w: PoolWorker, why: string): Promise<void> {
    this.opts.timeline.push({ kind: 'worker_killed', pid: w.proc.pid, text: `SIGKILL worker ${w.proc.pid}: ${why}` });
    await w.proc.signal('SIGKILL');
  }

  /** SIGSTOP by the runner (a worker whose request is held on the wire); a fresh worker takes over. */
  async pause(w: PoolWorker, why: string): Promise<void> {
    w.stopped = true;
    this.opts.timeline.push({ kind: 'worker_paused', pid: w.proc.pid, text: `SIGSTOP worker ${w.proc.pid}: ${why}` });
    await w.proc.signal('SIGSTOP');
    await this.ensureReplacement(`worker ${w.proc.pid} is stopped`);
  }

  /** SIGCONT to a stopped worker. */
  async resume(w: PoolWorker, why: string): Promise<void> {
    w.stopped = false;
    this.opts.timeline.push({ kind: 'worker_resumed', pid: w.proc.pid, text: `SIGCONT worker ${w.proc.pid}: ${why}` });
    await w.proc.signal('SIGCONT');
  }

  /** Ends a worker's `hold` at `point` (its `hit`): the runner has acted while it held there. */
  release(pid: number, point: InProcessPoint, hit: number): void {
    const w = this.byPid(pid);
    const stdin = w?.proc.child.stdin;
    if (!w?.alive || !stdin || stdin.destroyed) return;
    const line: ReleaseLine = { release: point, hit };
    stdin.write(`${JSON.stringify(line)}\n`, () => undefined);
  }

  /** Stops every worker: resumes stopped ones first, then SIGTERM (SIGKILL after 10 s). */
  async stopAll(): Promise<void> {
    this.closing = true;
    await this.replacing.catch(() => undefined);
    for (const w of this.workers) if (w.alive && w.stopped) await w.proc.signal('SIGCONT');
    await Promise.all(this.workers.filter((w) => w.alive).map((w) => w.proc.stop()));
    openPools.delete(this);
  }

  private async spawn(role: PoolWorker['role'], env: Record<string, string>): Promise<PoolWorker> {
    const proc = await spawnWorker({
      address: this.opts.address,
      taskQueue: this.opts.taskQueue,
      services: this.opts.services,
      workflowBundlePath: this.opts.bundlePath,
      stdinPipe: true,
      // Every worker of the lab carries the crash points (the lab bundle's interceptor calls their sink); only the
      // first has a plan that fires.
      env: { [CRASH_POINTS_ENV]: '1', ...env },
    });
    const w: PoolWorker = { proc, role, alive: true, stopped: false };
    this.workers.push(w);
    const plan = env[CRASH_PLAN_ENV] ? ` with crash plan ${env[CRASH_PLAN_ENV]}` : '';
    this.opts.timeline.push({
      kind: 'worker_started',
      pid: proc.pid,
      text: `worker ${proc.pid} started (${role})${plan}`,
    });
    this.watch(w);
    return w;
  }

  private watch(w: PoolWorker): void {
    const { timeline } = this.opts;
    const child = w.proc.child;
    createInterface({ input: child.stdout! }).on('line', (line) => this.onLine(w, line));
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      w.alive = false;
      timeline.push({
        kind: 'worker_exited',
        pid: w.proc.pid,
        signal,
        text: `worker ${w.proc.pid} exited (${signal ?? `code ${code}`})`,
      });
      void this.ensureReplacement(`worker ${w.proc.pid} is gone`);
    };
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else child.once('exit', onExit);
  }

  private onLine(w: PoolWorker, line: string): void {
    let msg: CrashPointLine | TransportFaultLine;
    try {
      msg = JSON.parse(line) as CrashPointLine | TransportFaultLine;
    } catch {
      return;
    }
    const { timeline } = this.opts;
    const pid = w.proc.pid;
    if (msg === null || typeof msg !== 'object') return;
    if ('transportFault' in msg) {
      timeline.push(transportFaultEvent(msg));
    } else if ('crashPointHit' in msg) {
      timeline.push({
        kind: 'crash_point_hit',
        pid,
        point: msg.crashPointHit,
        hit: msg.hit,
        text: `worker ${pid} passed ${msg.crashPointHit} (hit ${msg.hit})`,
      });
    } else if ('crashPoint' in msg) {
      timeline.push({
        kind: 'crash_point',
        pid,
        point: msg.crashPoint,
        action: msg.do,
        hit: msg.hit,
        ...(msg.ledger ? { ledger: msg.ledger } : {}),
        text: `worker ${pid} at ${msg.crashPoint} (hit ${msg.hit}): ${msg.do === 'kill' ? 'SIGKILL itself' : msg.do === 'pause' ? 'SIGSTOP itself' : msg.do === 'hold' ? 'holds until the runner has acted' : 'delay'}`,
      });
      if (msg.do === 'pause') {
        w.stopped = true;
        void this.ensureReplacement(`worker ${pid} is stopped`);
      }
    } else if ('crashPointResumed' in msg) {
      timeline.push({
        kind: 'crash_point_resumed',
        pid,
        point: msg.crashPointResumed,
        hit: msg.hit,
        text: `worker ${pid} resumed at ${msg.crashPointResumed}`,
      });
    }
  }
}

/** A function tool's fault, as the worker announced it, in the protocol's terms (the point and kind it planned). */
export function transportFaultEvent(msg: TransportFaultLine): Omit<TimelineEvent, 't'> {
  const point = msg.transportFault === 'before_send' ? 'downstream.before_commit' : 'downstream.after_commit';
  const action = msg.do === 'error' ? 'error_5xx' : msg.do;
  return {
    kind: 'fault_fired',
    pid: msg.pid,
    point,
    action,
    hit: msg.hit,
    tool: msg.tool,
    text: `worker ${msg.pid}: ${point} ${action} around the function of ${msg.tool} (hit ${msg.hit})`,
  };
}
