/** Starts a worker as its own OS process, so tests and the demo can SIGKILL or SIGSTOP it for real. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SCRIPTED_MODEL_ENV } from '../src/planner/scripted-model';
import { REPO_ROOT } from '../host/worker/bundle';
import { INSTALLED, nodeArgsFor, packageModule } from '../src/package-paths';

export interface WorkerProcess {
  readonly pid: number;
  readonly identity: string;
  readonly child: ChildProcess;
  /** SIGTERM and wait for a clean exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** Send a signal (SIGKILL, SIGSTOP, SIGCONT) and, for SIGKILL, wait until the process is gone. */
  signal(sig: NodeJS.Signals): Promise<void>;
}

export interface SpawnWorkerOptions {
  readonly address: string;
  readonly taskQueue: string;
  readonly services: Readonly<Record<string, string>>;
  readonly workflowBundlePath?: string;
  readonly plannerLogFile?: string;
  readonly maxCachedWorkflows?: number;
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the process; default the repository root. A cluster's worker host runs in its own. */
  readonly cwd?: string;
  /** Give the process a stdin pipe (`child.stdin`): the fault lab releases held crash points through it. */
  readonly stdinPipe?: boolean;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The environment a worker process gets: `inherited` (default this process's), then what `opts` says. */
export function workerProcessEnv(
  opts: SpawnWorkerOptions,
  inherited: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  return {
    ...(inherited as Record<string, string>),
    TEMPORAL_ADDRESS: opts.address,
    LEDGERLOOP_TASK_QUEUE: opts.taskQueue,
    LEDGERLOOP_SERVICES: JSON.stringify(opts.services),
    ...(opts.workflowBundlePath ? { LEDGERLOOP_WORKFLOW_BUNDLE: opts.workflowBundlePath } : {}),
    ...(opts.plannerLogFile ? { LEDGERLOOP_PLANNER_LOG: opts.plannerLogFile } : {}),
    ...(opts.maxCachedWorkflows !== undefined
      ? { LEDGERLOOP_MAX_CACHED_WORKFLOWS: String(opts.maxCachedWorkflows) }
      : {}),
    // Lab workers: the demo, the tests and the fault lab plan with the scripted model.
    [SCRIPTED_MODEL_ENV]: '1',
    // These workers are killed and paused on purpose: a dead worker's sticky queue must let go of its runs fast.
    LEDGERLOOP_STICKY_TIMEOUT_MS: '2000',
    ...opts.env,
  };
}

export async function spawnWorker(opts: SpawnWorkerOptions): Promise<WorkerProcess> {
  const env = workerProcessEnv(opts);
  // The loader by its path, so that a worker in a directory of its own still finds it.
  const child = spawn(process.execPath, nodeArgsFor(packageModule('lab', 'worker-main')), {
    cwd: opts.cwd ?? (INSTALLED ? process.cwd() : REPO_ROOT),
    env,
    stdio: [opts.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  // a worker gone before a write to its stdin reaches it: the write fails, not the runner
  child.stdin?.on('error', () => undefined);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const ready = await new Promise<{ worker: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s: ${stderr}`)), 60_000);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { worker?: string; pid?: number };
        if (msg.worker) {
          clearTimeout(timer);
          resolve({ worker: msg.worker, pid: msg.pid ?? child.pid! });
        }
      } catch {
        /* not our line */
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`worker exited before it was ready (${code ?? sig}): ${stderr}`));
    });
  });
  return {
    pid: ready.pid,
    identity: ready.worker,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
    async signal(sig) {
      child.kill(sig);
      if (sig === 'SIGKILL') await exited(child);
    },
  };
}
