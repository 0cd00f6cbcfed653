/**
 * The local model server (packages/local-model) as a child process of the lab: set up by
 * scripts/setup-local-model.sh, started on a free loopback port, read for its memory, stopped. Ledgerloop talks to
 * it only over HTTP, through the `openai` client, as to any hosted provider; nothing here imports node-llama-cpp.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../host/worker/bundle';
import { TS_LOADER } from '../../src/package-paths';
import { chooseModel, type ModelCatalogue, type ModelPin } from '../../packages/local-model/src/settings';
import type { RequestStat } from '../../packages/local-model/src/stats';

export const LOCAL_MODEL_DIR = path.join(REPO_ROOT, 'packages', 'local-model');
const SETUP_SCRIPT = path.join(REPO_ROOT, 'scripts', 'setup-local-model.sh');
const SERVER_MAIN = path.join(LOCAL_MODEL_DIR, 'src', 'main.ts');

/** The models of packages/local-model/weights.json. */
export function localModelCatalogue(): ModelCatalogue {
  return JSON.parse(readFileSync(path.join(LOCAL_MODEL_DIR, 'weights.json'), 'utf8')) as ModelCatalogue;
}

/** The pin of a model (default: LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default); throws for an unknown id. */
export function localModelPin(model?: string): ModelPin {
  return chooseModel(localModelCatalogue(), model);
}

/** Whether a model's weights and node-llama-cpp are installed (without checking their hash: the server does). */
export function localModelInstalled(model?: string): boolean {
  return (
    existsSync(path.join(LOCAL_MODEL_DIR, 'node_modules', 'node-llama-cpp')) &&
    existsSync(path.join(LOCAL_MODEL_DIR, 'models', localModelPin(model).file))
  );
}

/** Runs scripts/setup-local-model.sh for a model (quick when all is in place); throws when it fails. */
export function ensureLocalModel(model?: string): void {
  const r = spawnSync('bash', [SETUP_SCRIPT, localModelPin(model).id], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`scripts/setup-local-model.sh failed (${r.status ?? r.signal})`);
}

export interface LocalModelProcess {
  readonly pid: number;
  /** The OpenAI base URL, e.g. http://127.0.0.1:41234/v1 (what OPENAI_BASE_URL is set to). */
  readonly baseUrl: string;
  readonly modelId: string;
  readonly threads: number;
  readonly loadMs: number;
  /** Resident memory now and at its peak (VmRSS, VmHWM of /proc/<pid>/status), in MB. */
  memory(): { readonly rssMb: number; readonly peakRssMb: number };
  stop(): Promise<void>;
}

export interface StartLocalModelOptions {
  /** A model id of weights.json (default: LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default). */
  readonly model?: string;
  /** Default: LEDGERLOOP_LOCAL_MODEL_THREADS, else the cores (packages/local-model/src/main.ts). */
  readonly threads?: number;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Where the server's log lines go (default: dropped, the last 4 kB kept for errors). */
  readonly onLog?: (line: string) => void;
}

function statusKb(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts the server process and waits until it listens (the model is loaded by then). */
export async function startLocalModel(opts: StartLocalModelOptions = {}): Promise<LocalModelProcess> {
  const args = ['-r', TS_LOADER, SERVER_MAIN, '--port', String(opts.port ?? 0)];
  if (opts.threads !== undefined) args.push('--threads', String(opts.threads));
  args.push('--model', localModelPin(opts.model).id);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  createInterface({ input: child.stderr! }).on('line', (line) => {
    tail = `${tail}${line}\n`.slice(-4000);
    opts.onLog?.(line);
  });
  const ready = await new Promise<{ url: string; model: string; threads: number; loadMs: number }>(
    (resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the local model did not start within 180 s:\n${tail}`)),
        180_000,
      );
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const msg = JSON.parse(line) as {
            event?: string;
            url: string;
            model: string;
            threads: number;
            loadMs: number;
          };
          if (msg.event === 'listening') {
            clearTimeout(timer);
            resolve(msg);
          }
        } catch {
          /* not the line we wait for */
        }
      });
      child.once('exit', (code, sig) => {
        clearTimeout(timer);
        reject(new Error(`the local model server exited before it listened (${code ?? sig}):\n${tail}`));
      });
    },
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const pid = child.pid!;
  return {
    pid,
    baseUrl: ready.url,
    modelId: ready.model,
    threads: ready.threads,
    loadMs: ready.loadMs,
    memory: () => ({
      rssMb: Math.round(statusKb(pid, 'VmRSS') / 1024),
      peakRssMb: Math.round(statusKb(pid, 'VmHWM') / 1024),
    }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}

export type { RequestStat };

/** The server's per-request figures so far. */
export async function serverStats(server: Pick<LocalModelProcess, 'baseUrl'>): Promise<RequestStat[]> {
  const res = await fetch(new URL('/stats', server.baseUrl));
  if (!res.ok) throw new Error(`GET /stats answered ${res.status}`);
  return ((await res.json()) as { requests: RequestStat[] }).requests;
}
