/** The server's settings that need no model: pure, so the root project's tests and type check can import them. */
import os from 'node:os';

export const THREADS_ENV = 'LEDGERLOOP_LOCAL_MODEL_THREADS';

export class SetupError extends Error {
  override readonly name = 'SetupError';
}

/** Loopback addresses only: the server has no authentication. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The thread count: the option, else LEDGERLOOP_LOCAL_MODEL_THREADS, else the cores this process may use. */
export function threadCount(option?: number, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = env[THREADS_ENV] !== undefined && env[THREADS_ENV] !== '' ? Number(env[THREADS_ENV]) : undefined;
  const n = option ?? fromEnv ?? os.availableParallelism();
  if (!Number.isSafeInteger(n) || n < 1 || n > 256) throw new SetupError(`threads must be 1 to 256, not ${n}`);
  return n;
}
