/**
 * The agent run's input, checked where it is used: in the workflow, before anything runs. A client may start
 * `agentRun` with anything at all (the Temporal client does not check), and no input may fail a workflow task:
 * an input that does not fit fails the run at once with `Run.InputInvalid`, naming the first field that is wrong.
 * The check is lenient where the workflow is: fields it does not read pass through untouched.
 *
 * Written by hand rather than with zod: this module is evaluated by every run, so a zod schema here would be built
 * by every run, and would load zod into runs that otherwise reach it only through the shared tool declarations.
 */
import { isServedStrategy, strategyNames } from './retry-strategies';
import type { AgentRunInput } from './run';
import { tooDeep } from './json-depth';

type Check = (value: unknown, at: string) => string | null;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const text =
  (max: number, min = 1): Check =>
  (v, at) =>
    typeof v === 'string' && v.length >= min && v.length <= max
      ? null
      : `${at}: a string of ${min} to ${max} characters`;

const oneOf =
  (values: readonly string[]): Check =>
  (v, at) =>
    typeof v === 'string' && values.includes(v) ? null : `${at}: one of ${values.join(', ')}`;

/** A strategy this bundle serves: the runtime's two (a bundle of the repository's lab also serves the lab's). */
const strategy: Check = (v, at) => (isServedStrategy(v) ? null : `${at}: one of ${strategyNames().join(', ')}`);

const amount: Check = (v, at) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? null : `${at}: a finite number >= 0`;

const optional =
  (check: Check): Check =>
  (v, at) =>
    v === undefined ? null : check(v, at);

const object =
  (fields: Readonly<Record<string, Check>>): Check =>
  (v, at) => {
    if (!isObject(v)) return `${at}: an object`;
    for (const [name, check] of Object.entries(fields)) {
      const wrong = check(v[name], at === 'input' ? name : `${at}.${name}`);
      if (wrong !== null) return wrong;
    }
    return null;
  };

const numbers = (names: readonly string[]): Check =>
  object(Object.fromEntries(names.map((n) => [n, optional(amount)])));

const time: Check = (v, at) =>
  typeof v === 'string' && Number.isFinite(Date.parse(v)) ? null : `${at}: a time (ISO 8601 with zone)`;

/** The model's kind; the rest of the settings are the model's own, checked by its provider on the worker. */
const planner: Check = (v, at) => {
  if (!isObject(v)) return `${at}: an object`;
  if (v['kind'] === 'openai') return object({ model: text(200, 0) })(v, at);
  return object({ kind: text(200) })(v, at);
};

const prices: Check = (v, at) => {
  if (!isObject(v)) return `${at}: an object`;
  for (const [model, price] of Object.entries(v)) {
    const wrong = object({ promptPerMTokMicros: amount, completionPerMTokMicros: amount })(price, `${at}.${model}`);
    if (wrong !== null) return wrong;
  }
  return null;
};

const runInput = object({
  principal: object({ id: text(10_000), tenant: text(10_000) }),
  identityToken: optional(text(20_000, 0)),
  goal: text(100_000, 0),
  strategy,
  planner,
  deadlineAt: time,
  limits: optional(numbers(['model', 'tool', 'reconcile', 'compensation'])),
  caps: optional(
    numbers(['modelAttemptMs', 'toolAttemptMs', 'reconcileAttemptMs', 'recoveryReserveMs', 'abortGraceMs']),
  ),
  budgets: optional(
    numbers([
      'maxTurns',
      'maxToolCalls',
      'maxTokens',
      'maxCostMicros',
      'maxHistoryEvents',
      'noProgressTurns',
      'maxProposalsPerTurn',
    ]),
  ),
  onToolFailure: optional(oneOf(['compensate_and_stop', 'report_to_model'])),
  onAbort: optional(oneOf(['compensate', 'leave'])),
  onDenied: optional(oneOf(['report_to_model', 'stop'])),
  prices: optional(prices),
  carried: optional(object({ eventCount: amount, nextTurn: amount, projectionHash: text(200) })),
});

export type RunInputCheck =
  { readonly ok: true; readonly input: AgentRunInput } | { readonly ok: false; readonly message: string };

export function checkRunInput(raw: unknown): RunInputCheck {
  // First, by a loop: the checks below and every activity the run schedules walk the input by recursion.
  const deep = tooDeep(raw, 'the run input');
  if (deep !== undefined) return { ok: false, message: `${deep}; nothing was run` };
  const wrong = runInput(raw, 'input');
  if (wrong === null) return { ok: true, input: raw as AgentRunInput };
  return { ok: false, message: `the run input is invalid at ${wrong}; nothing was run` };
}
