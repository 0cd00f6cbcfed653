/**
 * The agent run's input, checked where it is used: in the workflow, before anything runs. A client may start
 * `agentRun` with anything at all (the Temporal client does not check), and no input may fail a workflow task:
 * an input that does not fit fails the run at once with `Run.InputInvalid`, naming the first field that is wrong.
 * The check is lenient where the workflow is: fields it does not read pass through untouched.
 */
import { z } from 'zod';
import { sharedSchema } from '../tools/shared-declarations';
import { RETRY_STRATEGIES, type AgentRunInput, type RetryStrategy } from './run';

function buildSchema() {
  const text = z.string().min(1).max(10_000);
  const amount = z.number().finite().nonnegative();
  const numbers = <K extends string>(keys: readonly K[]) =>
    z.looseObject(
      Object.fromEntries(keys.map((k) => [k, amount.optional()])) as Record<K, z.ZodOptional<typeof amount>>,
    );

  return z.looseObject({
    principal: z.looseObject({ id: text, tenant: text }),
    identityToken: z.string().max(20_000).optional(),
    goal: z.string().max(100_000),
    strategy: z.enum(RETRY_STRATEGIES as [RetryStrategy, ...RetryStrategy[]]),
    planner: z.discriminatedUnion('kind', [
      z.looseObject({
        kind: z.literal('scripted'),
        scenario: text,
        vars: z.record(z.string(), z.unknown()).optional(),
      }),
      z.looseObject({ kind: z.literal('openai'), model: z.string().max(200) }),
    ]),
    deadlineAt: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'not a time (ISO 8601 with zone)'),
    limits: numbers(['model', 'tool', 'reconcile', 'compensation']).optional(),
    caps: numbers([
      'modelAttemptMs',
      'toolAttemptMs',
      'reconcileAttemptMs',
      'recoveryReserveMs',
      'abortGraceMs',
    ]).optional(),
    budgets: numbers([
      'maxTurns',
      'maxToolCalls',
      'maxTokens',
      'maxCostMicros',
      'maxHistoryEvents',
      'noProgressTurns',
      'maxProposalsPerTurn',
    ]).optional(),
    onToolFailure: z.enum(['compensate_and_stop', 'report_to_model']).optional(),
    onAbort: z.enum(['compensate', 'leave']).optional(),
    onDenied: z.enum(['report_to_model', 'stop']).optional(),
    prices: z
      .record(z.string(), z.looseObject({ promptPerMTokMicros: amount, completionPerMTokMicros: amount }))
      .optional(),
    carried: z.looseObject({ eventCount: amount, nextTurn: amount, projectionHash: z.string() }).optional(),
  });
}

export type RunInputCheck =
  { readonly ok: true; readonly input: AgentRunInput } | { readonly ok: false; readonly message: string };

export function checkRunInput(raw: unknown): RunInputCheck {
  // Built once per worker (src/tools/shared-declarations.ts), not once per run.
  const parsed = sharedSchema('agent-run-input', buildSchema).safeParse(raw);
  if (parsed.success) return { ok: true, input: raw as AgentRunInput };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'input';
  return { ok: false, message: `the run input is invalid at ${where}: ${issue.message}; nothing was run` };
}
