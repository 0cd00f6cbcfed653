/**
 * The project config as the commands read it: `--config <path>`, else the nearest `ledgerloop.config.*` from the
 * working directory up (host/project/config.ts), else none (the built-in demo). A config that cannot be read or
 * validated is a usage error (exit 2) naming the file and the fields.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { loadProjectConfig, ProjectConfigError, type ProjectConfig } from '../host/project/config';
import { applyProjectEnvironment } from '../host/project/environment';
import { activeProject, configFlagOf, setActiveProject } from './active-project';
import { CliUsageError } from './errors';

export interface ProjectFlags {
  /** `--config <path>`. */
  readonly config?: string;
}

/** Adds `--config <path>`. */
export function addConfigOption(cmd: Command): Command {
  return cmd.option(
    '--config <path>',
    'the project config (default: the nearest ledgerloop.config.{mjs,js,cjs,json,ts} from the working directory up; none: the built-in demo)',
  );
}

/** The project config for a command, or undefined without one; a bad config is a CliUsageError. */
export async function projectFor(flags: ProjectFlags, cwd: string = process.cwd()): Promise<ProjectConfig | undefined> {
  try {
    return await loadProjectConfig({ ...(flags.config !== undefined ? { configPath: flags.config } : {}), cwd });
  } catch (err) {
    if (err instanceof ProjectConfigError) throw new CliUsageError(err.message);
    throw err;
  }
}

/**
 * Loads the project for this process from its command line (`--config`, else the nearest config file), makes it
 * the active project and applies its environment (variables already set win). Returns it, or undefined.
 */
export async function loadActiveProject(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<ProjectConfig | undefined> {
  const flag = configFlagOf(argv);
  const project = await projectFor(flag === undefined ? {} : { config: flag }, cwd);
  setActiveProject(project);
  if (project !== undefined) applyProjectEnvironment(project, env);
  return project;
}

/** The project a command runs for: its own `--config`, else the process's active project. */
export async function commandProject(flags: ProjectFlags): Promise<ProjectConfig | undefined> {
  const active = activeProject();
  if (flags.config === undefined) return active;
  if (active !== undefined && path.resolve(flags.config) === active.file) return active;
  return projectFor(flags);
}
