/** Runs a bench script in a process of its own and resolves with the JSON of the last line it printed. */
import { fork } from 'node:child_process';

export function runJsonChild<T>(
  entry: string,
  args: readonly string[],
  execArgv: readonly string[],
  what: string,
  /** More environment for the child (its keys, say, which never go on its command line). */
  env: Readonly<Record<string, string>> = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(entry, [...args], {
      execArgv: [...execArgv],
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      env: { ...process.env, ...env },
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}') as T)
        : reject(new Error(`${what} exited ${code}`)),
    );
  });
}
