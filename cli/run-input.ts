/**
 * The AgentRunInput `ledgerloop start` sends: from a JSON file (`--input run.json`, the AgentRunInput shape) and/or
 * flags, flags winning. Pure apart from the injected file reader; every problem is a one-line CliUsageError.
 */
import { z } from 'zod';
import { isServedStrategy, strategyNames } from '../src/domain/retry-strategies';
import type { AgentRunInput, OpenAIPlannerConfig, RetryStrategy } from '../src/domain/run';
import type { ScriptedPlannerConfig } from '../src/planner/scripted-model';
import { CliUsageError } from './errors';
import { tooDeep } from '../src/domain/json-depth';
import { parseDeadline, parsePrincipal, parseStrategy, parseTenant, parseVars } from './parse';

/** The planners the CLI starts runs with: the scripted model's scenario, or an OpenAI-compatible model. */
type PlannerConfig = ScriptedPlannerConfig | OpenAIPlannerConfig;

/** Defaults when neither the file nor a flag says otherwise. */
export const START_DEFAULTS = {
  principal: 'user:alice',
  tenant: 'acme',
  strategy: 'same_key_replay' as RetryStrategy,
  deadline: '5m',
} as const;

/** The flags of `ledgerloop start` that shape the input. */
export interface StartInputFlags {
  readonly scenario?: string;
  readonly vars?: readonly string[];
  readonly input?: string;
  readonly openai?: boolean;
  readonly model?: string;
  readonly goal?: string;
  readonly strategy?: string;
  readonly principal?: string;
  readonly tenant?: string;
  readonly deadline?: string;
}

export interface RunInputDeps {
  readonly readFile: (file: string) => string;
  readonly nowMs: number;
  /** Scenario names the scripted model knows; a scripted planner must name one. */
  readonly knownScenarios: readonly string[];
}

export interface BuiltRunInput {
  readonly input: AgentRunInput;
  /** Things worth saying on stderr that do not stop the start (e.g. unknown fields passed through). */
  readonly warnings: readonly string[];
}

const positiveInt = z.number().int().positive();
const positiveMs = z.number().positive();

const plannerSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('scripted'),
    scenario: z.string().min(1),
    vars: z.record(z.string(), z.unknown()).optional(),
  }),
  z.strictObject({
    kind: z.literal('openai'),
    model: z.string(),
    temperature: z.number().min(0).max(2).optional(),
    maxOutputTokens: positiveInt.optional(),
    systemPrompt: z.string().optional(),
  }),
]);

/** AgentRunInput, every field optional (flags may supply it); unknown top-level fields pass through with a warning. */
const fileSchema = z.looseObject({
  principal: z.strictObject({ id: z.string().min(1), tenant: z.string().min(1) }).optional(),
  goal: z.string().min(1).optional(),
  strategy: z
    .string()
    .refine(isServedStrategy, { error: () => `one of ${strategyNames().join(', ')}` })
    .optional(),
  planner: plannerSchema.optional(),
  deadlineAt: z.iso.datetime({ offset: true }).optional(),
  limits: z
    .looseObject({ model: positiveInt, tool: positiveInt, reconcile: positiveInt, compensation: positiveInt })
    .partial()
    .optional(),
  caps: z
    .looseObject({
      modelAttemptMs: positiveMs,
      toolAttemptMs: positiveMs,
      reconcileAttemptMs: positiveMs,
      recoveryReserveMs: positiveMs,
    })
    .partial()
    .optional(),
  budgets: z.looseObject({ maxTurns: positiveInt, maxToolCalls: positiveInt }).partial().optional(),
});
type FileInput = z.infer<typeof fileSchema>;
const KNOWN_FILE_KEYS = new Set(Object.keys(fileSchema.shape));

/** Reads and validates `--input`; the message names the file and the first problem. */
export function readInputFile(file: string, readFile: (f: string) => string): { value: FileInput; warnings: string[] } {
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliUsageError(
      `--input: cannot read ${file}${code === 'ENOENT' ? ': no such file' : `: ${(err as Error).message}`}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliUsageError(`--input: ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    throw new CliUsageError(`--input: ${file}: ${where}: ${issue.message}`);
  }
  const unknown = Object.keys(parsed.data).filter((k) => !KNOWN_FILE_KEYS.has(k));
  const warnings =
    unknown.length > 0 ? [`note: ${file}: passing unknown field(s) ${unknown.join(', ')} through unchecked`] : [];
  return { value: parsed.data, warnings };
}

function plannerFrom(flags: StartInputFlags, file: FileInput, knownScenarios: readonly string[]): PlannerConfig {
  if (flags.scenario !== undefined && flags.openai)
    throw new CliUsageError('--scenario and --openai exclude each other');
  const base: PlannerConfig | undefined =
    flags.scenario !== undefined
      ? { kind: 'scripted', scenario: flags.scenario }
      : flags.openai
        ? { kind: 'openai', model: '' }
        : file.planner;
  if (base === undefined)
    throw new CliUsageError('one of --scenario <name>, --openai or --input <file> (with a planner) is required');
  const vars = flags.vars && flags.vars.length > 0 ? parseVars(flags.vars) : undefined;
  if (base.kind === 'scripted') {
    if (flags.model !== undefined) throw new CliUsageError('--model applies to --openai runs only');
    if (!knownScenarios.includes(base.scenario)) {
      throw new CliUsageError(`unknown scenario "${base.scenario}" (known: ${knownScenarios.join(', ')})`);
    }
    const fileVars =
      file.planner?.kind === 'scripted' && file.planner.scenario === base.scenario ? file.planner.vars : undefined;
    const merged = { ...(fileVars ?? base.vars ?? {}), ...(vars ?? {}) };
    return { kind: 'scripted', scenario: base.scenario, ...(Object.keys(merged).length > 0 ? { vars: merged } : {}) };
  }
  if (vars !== undefined) throw new CliUsageError('--var applies to scripted runs (--scenario) only');
  const fileOpenAI = file.planner?.kind === 'openai' ? file.planner : undefined;
  return { ...(fileOpenAI ?? base), kind: 'openai', model: flags.model ?? fileOpenAI?.model ?? '' };
}

/** The run input: flags over file over defaults, validated. */
export function buildRunInput(flags: StartInputFlags, deps: RunInputDeps): BuiltRunInput {
  const fromFile =
    flags.input !== undefined ? readInputFile(flags.input, deps.readFile) : { value: {} as FileInput, warnings: [] };
  const file = fromFile.value;
  const planner = plannerFrom(flags, file, deps.knownScenarios);
  const principalId = parsePrincipal(flags.principal ?? file.principal?.id ?? START_DEFAULTS.principal);
  const tenant = parseTenant(flags.tenant ?? file.principal?.tenant ?? START_DEFAULTS.tenant);
  const strategy = parseStrategy(flags.strategy ?? file.strategy ?? START_DEFAULTS.strategy);
  const goal =
    flags.goal ?? file.goal ?? (planner.kind === 'scripted' ? `scripted scenario ${planner.scenario}` : undefined);
  if (goal === undefined || goal.trim() === '')
    throw new CliUsageError('--goal is required for an --openai run (what should the model achieve?)');
  let deadlineAt: string;
  if (flags.deadline !== undefined) deadlineAt = parseDeadline(flags.deadline, deps.nowMs);
  else if (file.deadlineAt !== undefined) deadlineAt = parseDeadline(file.deadlineAt, deps.nowMs);
  else deadlineAt = parseDeadline(START_DEFAULTS.deadline, deps.nowMs);

  const { principal: _p, goal: _g, strategy: _s, planner: _pl, deadlineAt: _d, ...rest } = file;
  const input = {
    ...rest,
    principal: { id: principalId, tenant },
    goal,
    strategy,
    planner,
    deadlineAt,
  } as AgentRunInput;
  // The worker refuses such an input (Run.InputInvalid) and the payload converter cannot carry much deeper: refused
  // here, before anything is started, naming the field (`--var a.b=[[...]]` is under planner.vars.a.b).
  const deep = tooDeep(input, 'the run input');
  if (deep !== undefined) throw new CliUsageError(`--var/--input: ${deep}; nothing was started`);
  return { input, warnings: fromFile.warnings };
}
