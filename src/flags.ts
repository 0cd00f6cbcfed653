/**
 * Command-line flags for the repository's small processes (a service's `main.ts`, the bench): `node:util`'s
 * `parseArgs` in strict mode, with every refusal a typed `FlagError` whose message names the flag. The CLI
 * (`cli/`) uses commander; this is for the entry points that take a handful of flags and no subcommands.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What `parseFlags` gives back: `parseArgs`' values for `O`, named so that the package's declarations can carry it. */
export type FlagValues<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>
>['values'];

/** Why a command line was refused. */
export const FlagRefusal = {
  /** A flag the process does not take. */
  Unknown: 'Flags.Unknown',
  /** A flag that takes a value was given none. */
  MissingValue: 'Flags.MissingValue',
  /** A switch was given a value (`--lab=1`). */
  UnexpectedValue: 'Flags.UnexpectedValue',
  /** A bare argument where only flags are taken. */
  Positional: 'Flags.Positional',
  /** Anything else `parseArgs` refuses (a value that looks like a flag: `--db --lab`). */
  Invalid: 'Flags.Invalid',
} as const;
export type FlagRefusal = (typeof FlagRefusal)[keyof typeof FlagRefusal];

export class FlagError extends Error {
  override readonly name = 'FlagError';
  constructor(
    readonly code: FlagRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** The first thing wrong with `argv` for `options`, found from parseArgs' tokens so the message is ours. */
function firstProblem(argv: readonly string[], options: Options): FlagError | undefined {
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind === 'positional') return new FlagError(FlagRefusal.Positional, `unexpected argument ${t.value}`);
    if (t.kind !== 'option') continue;
    const spec = options[t.name];
    if (spec === undefined) return new FlagError(FlagRefusal.Unknown, `unknown argument ${t.rawName}`);
    if (spec.type === 'string' && t.value === undefined)
      return new FlagError(FlagRefusal.MissingValue, `${t.rawName} needs a value`);
    if (spec.type === 'boolean' && t.value !== undefined)
      return new FlagError(FlagRefusal.UnexpectedValue, `${t.rawName} takes no value`);
  }
  return undefined;
}

/**
 * Parses `argv` (flags only: `--name value`, `--name=value`, switches) against `options`, or throws `FlagError`.
 * A flag given twice keeps its last value (unless its option is `multiple`).
 */
export function parseFlags<O extends Options>(argv: readonly string[], options: O): FlagValues<O> {
  const problem = firstProblem(argv, options);
  if (problem !== undefined) throw problem;
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new FlagError(FlagRefusal.Invalid, err instanceof Error ? err.message : String(err));
  }
}

/** Parses a non-negative integer flag value, or throws `FlagError` naming the flag. */
export function integerFlag(text: string, name: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n))
    throw new FlagError(FlagRefusal.Invalid, `${name} must be a non-negative integer`);
  return n;
}
