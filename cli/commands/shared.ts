/**
 * Plumbing shared by the run commands: where output goes, one-line errors with the documented exit codes (also
 * for commander's own parse errors), and the action wrapper that maps every failure to a CliError.
 */
import { InvalidArgumentError, type Command, type CommanderError } from 'commander';
import { shutdownTracingFromEnv } from '../../src/observability/tracing-mode';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../errors';
import { parseNonEmpty } from '../parse';
import type { ProgressStream } from '../progress';

/** Where a command writes, and how the process ends; injectable for tests. */
export interface CommandIO {
  /** Program output (tables, JSON). */
  out(text: string): void;
  /** Diagnostics and progress. */
  readonly err: ProgressStream;
  /** Ends the process at once (commander parse errors). */
  exit(code: number): never;
  /** Sets the code the process ends with once the action returns. */
  setExitCode(code: number): void;
}

export const processIO: CommandIO = {
  out: (text) => process.stdout.write(text),
  err: process.stderr,
  exit: (code) => process.exit(code),
  setExitCode: (code) => {
    process.exitCode = code;
  },
};

/** A command on one run: `ledgerloop <name> <workflowId>` (the id must not be empty); add its own options after. */
export function runCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .argument(
      '<workflowId>',
      'the run’s workflow id',
      arg((v) => parseNonEmpty(v, 'workflowId')),
    );
}

/** A parser for commander's `.option(flags, description, parser)` that reports CliUsageErrors as invalid arguments. */
export function arg<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (err) {
      // commander already names the option; drop our own `--flag: ` prefix.
      throw new InvalidArgumentError((err instanceof Error ? err.message : String(err)).replace(/^--?[\w-]+: /, ''));
    }
  };
}

/**
 * Makes commander's own errors (missing argument or option, unknown option, invalid value) one line on stderr with
 * exit code 2, and --help exit 0.
 */
export function configureCommand(cmd: Command, io: CommandIO): Command {
  const name = `ledgerloop ${cmd.name()}`;
  return cmd
    .showHelpAfterError(false)
    .configureOutput({
      writeOut: (s) => io.out(s),
      writeErr: (s) => io.err.write(s),
      outputError: (s, write) => write(`${name}: ${s.replace(/^error: /, '').trim()} (see ${name} --help)\n`),
    })
    .exitOverride((e: CommanderError) => io.exit(e.exitCode === 0 ? EXIT_OK : EXIT_USAGE));
}

/** Runs an action body: its return value, or the CliError it throws, becomes the exit code; errors are one line. */
export async function runAction(cmd: Command, io: CommandIO, body: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await body();
  } catch (err) {
    const e =
      err instanceof CliError ? err : new CliError(err instanceof Error ? err.message : String(err), EXIT_FAILED);
    io.err.write(`ledgerloop ${cmd.name()}: ${e.message.split('\n')[0]}\n`);
    code = e.exitCode;
  } finally {
    await shutdownTracingFromEnv();
  }
  io.setExitCode(code);
}

/** Writes `value` as one JSON document on stdout. */
export function printJson(io: CommandIO, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
