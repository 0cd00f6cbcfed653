/**
 * The project config this `ledgerloop` process runs for, loaded once before the commands parse (cli/main.ts), so
 * that the defaults every command shows (`--address`, `--task-queue`) and the advice it gives (how to start a
 * worker) are the project's. Unset: the built-in demo, exactly as without a config. No imports, so any module
 * may read it.
 */
import type { ProjectConfig } from '../host/project/config';

let active: ProjectConfig | undefined;

/** The project of this process, or undefined (the built-in demo). */
export function activeProject(): ProjectConfig | undefined {
  return active;
}

/** Sets (or, with undefined, clears) the project of this process. */
export function setActiveProject(project: ProjectConfig | undefined): void {
  active = project;
}

/** `--config <path>` (or `--config=<path>`) as given on a command line, before commander parses it. */
export function configFlagOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (a === '--config') return argv[i + 1];
    if (a.startsWith('--config=')) return a.slice('--config='.length);
  }
  return undefined;
}
