/**
 * The project config as the commands read it: `--config <path>`, else the nearest `ledgerloop.config.*` from the
 * working directory up (src/project/config.ts), else none (the built-in demo). A config that cannot be read or
 * validated is a usage error (exit 2) naming the file and the fields.
 */
import type { Command } from 'commander';
import { loadProjectConfig, ProjectConfigError, type ProjectConfig } from '../src/project/config';
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
