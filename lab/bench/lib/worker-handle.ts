/** Parent side of lab/bench/worker-proc.ts: fork a worker process, ask it for RSS figures, stop it. */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FromWorker, RssReport, ToWorker, WorkerProcConfig } from '../worker-proc';

export interface WorkerHandle {
  readonly pid: number;
  /**
   * With `stackTraceHook: 'off'`: the workflow threads that skipped the SDK's stack-trace hook so far (a thread
   * starts with the worker's first workflow task); 0 for a worker started with the hook.
   */
  hookOffThreads(): number;
  /** With `moduleSwitches`: the runtime modules this process has replaced so far (each once). */
  switchedModules(): string[];
  readonly startupMs: number;
  readonly readyRssMb: number;
  resetRss(): void;
  /** `gc`: the worker collects garbage before it reads (its heap figure is then what it retains). */
  rss(opts?: { gc?: boolean }): Promise<RssReport>;
  stop(): Promise<void>;
}

const ENTRY = path.join(__dirname, '..', 'worker-proc.ts');
const HOOK_OFF = path.join(__dirname, '..', 'stack-hook-off.cjs');
const WORKER_SWITCH = path.join(__dirname, '..', 'switches', 'worker-switch.cjs');

export interface StartWorkerOptions {
  /** Run under `--cpu-prof`, writing the profiles here. */
  readonly cpuProfDir?: string;
  /** Start with `--expose-gc`, so `rss({ gc: true })` can collect first (the memory section). */
  readonly exposeGc?: boolean;
  /**
   * `off`: the workflow threads skip the SDK's promise hook (lab/bench/stack-hook-off.cjs), to price it. A
   * measurement only; the mark file records each thread that skipped it.
   */
  readonly stackTraceHook?: { readonly off: true; readonly markFile: string };
  /**
   * Runtime modules replaced by bench stubs in this worker process (lab/bench/switches/worker-switch.cjs): the
   * attribution section's switches. A measurement only; the mark file records each module that was replaced.
   */
  readonly moduleSwitches?: { readonly table: Readonly<Record<string, string>>; readonly markFile: string };
}

export async function startWorker(cfg: WorkerProcConfig, opts: StartWorkerOptions = {}): Promise<WorkerHandle> {
  const started = Date.now();
  const hookOff = opts.stackTraceHook;
  const switches = opts.moduleSwitches;
  const execArgv = [
    '-r',
    'tsx/cjs',
    ...(switches ? ['-r', WORKER_SWITCH] : []),
    ...(hookOff ? ['-r', HOOK_OFF] : []),
    ...(opts.exposeGc ? ['--expose-gc'] : []),
    ...(opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : []),
  ];
  if (hookOff) writeFileSync(hookOff.markFile, '');
  if (switches) writeFileSync(switches.markFile, '');
  const child: ChildProcess = fork(ENTRY, [], {
    execArgv,
    env: {
      ...process.env,
      BENCH_WORKER_CONFIG: JSON.stringify(cfg),
      ...(hookOff ? { BENCH_STACK_HOOK_OFF_MARK: hookOff.markFile } : {}),
      ...(switches
        ? { BENCH_WORKER_SWITCHES: JSON.stringify(switches.table), BENCH_WORKER_SWITCH_MARK: switches.markFile }
        : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waiters: Array<(m: RssReport) => void> = [];
  const ready = new Promise<number>((resolve, reject) => {
    child.on('message', (m: FromWorker) => {
      if (m.type === 'ready') resolve(m.rssMb);
      else if (m.type === 'error') reject(new Error(`bench worker failed: ${m.message}`));
      else if (m.type === 'rss') waiters.shift()?.(m);
    });
    child.once('exit', (code) => reject(new Error(`bench worker exited (code ${code}) before it was ready`)));
  });
  const readyRssMb = await ready;
  const send = (m: ToWorker): void => {
    child.send(m);
  };
  const lines = (file: string): string[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
  return {
    pid: child.pid ?? -1,
    hookOffThreads: () => (hookOff ? lines(hookOff.markFile).length : 0),
    switchedModules: () => (switches ? [...new Set(lines(switches.markFile))] : []),
    startupMs: Date.now() - started,
    readyRssMb,
    resetRss: () => send({ type: 'rss-reset' }),
    rss: (rssOpts = {}) => {
      if (rssOpts.gc && !opts.exposeGc) {
        // A heap figure read without the collection it promises would look like retained memory.
        return Promise.reject(new Error('rss({ gc: true }) needs a worker started with exposeGc'));
      }
      return new Promise<RssReport>((resolve) => {
        waiters.push(resolve);
        send({ type: 'rss', ...(rssOpts.gc ? { gc: true } : {}) });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Reads `worker`'s RSS every second until stopped; `stop()` resolves with the readings (MB). */
export function readRssEverySecond(worker: WorkerHandle): { stop(): Promise<number[]> } {
  const mb: number[] = [];
  let inFlight: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    inFlight = worker.rss().then(
      (r) => mb.push(r.nowMb),
      () => undefined, // a reading lost while the worker is busy is a missing sample, not a failed bench
    );
  }, 1_000);
  return {
    stop: async () => {
      clearInterval(timer);
      await inFlight;
      return mb;
    },
  };
}
