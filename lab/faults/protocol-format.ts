/**
 * The fault protocol file, `ledgerloop.fault-protocol/1`: versioned JSON validated with zod. The JSON Schema in
 * docs/fault-protocol.schema.json is generated from `FaultProtocol` (scripts/fault-schema.ts); docs/fault-protocol.md
 * explains every field. A file that does not validate is a `ProtocolFormatError` naming each bad field, and the
 * runner starts nothing.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { strategyNames, type RetryStrategy } from '../../src/domain/retry-strategies';
import '../strategies';
import { scenarios } from '../scenarios';
import { Policy, RateLimitScope } from '../../src/domain/policy-format';
import { CRASH_POINT_NAMES, CRASH_POINTS, FAULT_KINDS } from './catalog';
import { COMPARISONS, METRIC_NAMES, METRICS, ORDERED_COMPARISONS } from './metrics';
import { builtinTools, type ToolRegistry } from '../../src/tools/registry';
import { TOOL_POINTS, toolKinds, toolTarget, type ToolPoint, type ToolTarget } from './tool-targets';

export const PROTOCOL_FORMAT = 'ledgerloop.fault-protocol/1';

/** Services a case can run beside (or instead of) the wallet; each is a fresh process and database per case. */
export const CASE_SERVICES = ['wallet', 'inventory', 'shipping', 'orders', 'notifications'] as const;
export type CaseService = (typeof CASE_SERVICES)[number];
/** A service a case runs: one of the package's, or one of a project's. */
export type ServiceName = string;

const SCENARIO_NAMES = Object.keys(scenarios);

/** The ledger events a `run.cancel` or `run.message` fault can wait for (its `after`). */
export const TRIGGER_EVENTS = [
  'ModelRequestStarted',
  'ToolProposalRecorded',
  'ApprovalRequested',
  'ApprovalGranted',
  'DispatchDeferred',
  'DispatchIntentRecorded',
  'ToolAttemptStarted',
  'ToolOutcomeMarkedUnknown',
  'ToolResultRecorded',
  'CompensationStarted',
  'OperatorWaitStarted',
  'LedgerCarriedForward',
  // In-process points of the case's first worker: it holds there (TRIGGER_HOLD_MS) while the runner acts.
  'workflow.before_intent',
  'tool.before_send',
  'tool.after_response',
  'compensation.before_send',
  'compensation.after_response',
] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];
/** The `after` values that are in-process points of a model's call (the explorer draws its triggers from these). */
export const CALL_POINT_TRIGGERS: readonly TriggerEvent[] = [
  'workflow.before_intent',
  'tool.before_send',
  'tool.after_response',
];
/**
 * The `after` values that are in-process points rather than ledger events: a call's, and a compensation's (before
 * it sends, or holding its answer), so a cancel can land at a known moment of the saga.
 */
export const POINT_TRIGGERS: readonly TriggerEvent[] = [
  ...CALL_POINT_TRIGGERS,
  'compensation.before_send',
  'compensation.after_response',
];
/**
 * How long, at most, the first worker holds at a point a run.cancel or run.message fault is triggered by: the
 * runner releases it as soon as it has acted. Inside a dispatch attempt (before the send, after the response) the
 * hold must stay under the attempt's 3 s timeout, or the hold itself would make the attempt time out.
 */
export const TRIGGER_HOLD_MS = 2_500;
const list = (names: readonly string[]): string => names.join(', ');

/** A whole number of milliseconds, or a range the seeded PRNG picks from. */
const IntOrRange = (min: number, max: number) =>
  z.union([
    z.number().int().min(min).max(max),
    z
      .strictObject({ min: z.number().int().min(min).max(max), max: z.number().int().min(min).max(max) })
      .refine((r) => r.min <= r.max, { message: 'min must not exceed max', path: ['max'] }),
  ]);

/**
 * What a protocol may name: the scenarios of the scripted model and the services a case runs. The built-in one is
 * the demo's (the package's scenarios and services); a project's comes from its config (`ledgerloop faults` with
 * a project: its scenarios module and its services).
 */
export interface ProtocolVocabulary {
  readonly scenarios: readonly string[];
  readonly services: readonly string[];
  /** The service a downstream fault names when it names none. */
  readonly defaultService: string;
  readonly scenarioHelp: string;
  readonly servicesHelp: string;
  /** The tools a fault may name (`tool`): where each one's faults are injected, by its transport. */
  readonly tools: ToolTargets;
}

/** The tools of a registry, each with where its faults go (lab/faults/tool-targets.ts). */
export interface ToolTargets {
  readonly names: readonly string[];
  target(name: string): ToolTarget | undefined;
}

/** The tool targets of `registry` (a project's tools module, or the built-in tools). */
export function toolTargetsOf(registry: ToolRegistry): ToolTargets {
  return {
    names: registry.names(),
    target: (name) => {
      const tool = registry.get(name);
      return tool === undefined ? undefined : toolTarget(tool);
    },
  };
}

/** The package's own scenarios and services. */
export const BUILTIN_VOCABULARY: ProtocolVocabulary = {
  scenarios: SCENARIO_NAMES,
  services: CASE_SERVICES,
  defaultService: 'wallet',
  scenarioHelp: 'a scenario of the scripted model (src/planner/scenarios.ts), e.g. wallet-debit',
  servicesHelp: 'default: what the scenario needs',
  tools: toolTargetsOf(builtinTools),
};

/** How a refusal names the kind of tool a fault's site serves. */
const SITE_NAMES: Readonly<Record<ToolTarget['via'], string>> = {
  service: 'a Ledgerloop-contract tool',
  worker: 'a function tool',
  proxy: 'an HTTP tool',
  mcp: 'an MCP tool',
};

/** The protocol's schemas for `vocab`. */
export function protocolSchemas(vocab: ProtocolVocabulary) {
  const Fault = z
    .strictObject({
      at: z.enum(CRASH_POINT_NAMES as [string, ...string[]], {
        error: (i) => `unknown crash point ${JSON.stringify(i.input)}; known: ${list(CRASH_POINT_NAMES)}`,
      }),
      do: z.enum(FAULT_KINDS, {
        error: (i) => `unknown fault kind ${JSON.stringify(i.input)}; known: ${list(FAULT_KINDS)}`,
      }),
      occurrence: IntOrRange(1, 100)
        .optional()
        .describe('Which hit of the point (or matching downstream request) suffers the fault; default 1'),
      ms: IntOrRange(0, 600_000)
        .optional()
        .describe('delay: how long; pause: longest hold; kill at a downstream: how long the request is held'),
      times: z.number().int().min(1).max(100).optional().describe('downstream points: how many matching requests'),
      service: z
        .enum(vocab.services as [string, ...string[]], {
          error: (i) => `unknown service ${JSON.stringify(i.input)}; known: ${list(vocab.services)}`,
        })
        .optional()
        .describe(`downstream and network points: which service; default ${vocab.defaultService}`),
      path: z
        .string()
        .startsWith('/')
        .optional()
        .describe('downstream and network points: only this route, e.g. /v1/debits'),
      tool: z
        .string()
        .min(1)
        .optional()
        .describe(
          'downstream.before_commit and downstream.after_commit: only this tool\u2019s calls, injected where its transport is reached (its service, around its function in the worker, or a proxy in front of its HTTP API); service and path come from its declaration',
        ),
      policy: Policy.optional().describe('publish_policy: the policy version to publish'),
      per: RateLimitScope.optional().describe(
        'rate_limit: who shares the window (run, principal, tenant); default run',
      ),
      max: z.number().int().min(1).max(1_000).optional().describe('rate_limit: dispatches per window; default 1'),
      action: z
        .string()
        .min(1)
        .optional()
        .describe('rate_limit: the policy action limited (a rule of the policy); default wallet.debit'),
      after: z
        .enum(TRIGGER_EVENTS)
        .optional()
        .describe(
          'run.cancel and run.message: the ledger event type (or in-process point of the first worker, which then holds there until the runner has acted, 2.5 s at most) whose `occurrence`-th record (hit) triggers the act, `ms` later; default ToolAttemptStarted',
        ),
      events: z
        .number()
        .int()
        .min(4)
        .max(100_000)
        .optional()
        .describe(
          'continue_as_new: the run\u2019s history budget (budgets.maxHistoryEvents); at least 4, above the 3 events a continued run starts with, so it never continues at once again',
        ),
    })
    .superRefine((f, ctx) => {
      const spec = CRASH_POINTS[f.at as keyof typeof CRASH_POINTS];
      if (spec && !(spec.kinds as readonly string[]).includes(f.do)) {
        ctx.addIssue({
          code: 'custom',
          path: ['do'],
          message: `"${f.do}" cannot happen at "${f.at}" (allowed there: ${list(spec.kinds)})`,
        });
      }
      if (f.do === 'publish_policy' && f.policy === undefined) {
        ctx.addIssue({ code: 'custom', path: ['policy'], message: 'publish_policy needs the policy to publish' });
      }
      if (f.tool !== undefined) checkTool(f, ctx);
      const keys: (keyof typeof f)[] =
        spec?.site === 'downstream' ? [] : spec?.site === 'network' ? ['times'] : ['times', 'service', 'path'];
      if (f.at !== 'policy.rate_limit') keys.push('per', 'max', 'action');
      if (f.at !== 'run.cancel' && f.at !== 'run.message') keys.push('after');
      if (f.at !== 'run.history_budget') keys.push('events');
      for (const k of keys) {
        if (f[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: `${k} does not apply at ${f.at}` });
      }
      if (f.do === 'continue_as_new' && f.events === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['events'],
          message: 'continue_as_new needs the history budget (events)',
        });
      }
    });
  type Fault = z.infer<typeof Fault>;

  /** A fault naming a tool: a point the tool can be reached at, a kind its injection site takes, no own service. */
  function checkTool(
    f: { at: string; do: string; tool?: string; service?: string; path?: string },
    ctx: z.RefinementCtx,
  ) {
    const issue = (path: string, message: string): void => void ctx.addIssue({ code: 'custom', path: [path], message });
    if (!(TOOL_POINTS as readonly string[]).includes(f.at))
      return issue('tool', `tool does not apply at ${f.at} (only at ${list(TOOL_POINTS)})`);
    const target = vocab.tools.target(f.tool!);
    if (target === undefined)
      return issue('tool', `unknown tool ${JSON.stringify(f.tool)}; known: ${list(vocab.tools.names)}`);
    const kinds = toolKinds(target, f.at as ToolPoint);
    if (kinds !== undefined && !(kinds as readonly string[]).includes(f.do))
      issue('do', `"${f.do}" cannot happen at "${f.at}" on ${f.tool} (${SITE_NAMES[target.via]} takes ${list(kinds)})`);
    for (const k of ['service', 'path'] as const)
      if (f[k] !== undefined) issue(k, `${k} comes from the declaration of ${f.tool}; leave it out`);
  }

  const Expectation = z
    .strictObject({
      metric: z.enum(METRIC_NAMES as [string, ...string[]], {
        error: (i) => `unknown metric ${JSON.stringify(i.input)}; known: ${list(METRIC_NAMES)}`,
      }),
      op: z.enum(COMPARISONS, {
        error: (i) => `unknown comparison ${JSON.stringify(i.input)}; use one of ${list(COMPARISONS)}`,
      }),
      value: z.union([z.number(), z.boolean(), z.string()]),
    })
    .superRefine((e, ctx) => {
      const spec = METRICS[e.metric as keyof typeof METRICS];
      if (!spec) return;
      if (typeof e.value !== spec.type) {
        ctx.addIssue({
          code: 'custom',
          path: ['value'],
          message: `${e.metric} is a ${spec.type}, not a ${typeof e.value}`,
        });
      }
      if (ORDERED_COMPARISONS.includes(e.op as (typeof ORDERED_COMPARISONS)[number]) && spec.type !== 'number') {
        ctx.addIssue({
          code: 'custom',
          path: ['op'],
          message: `${e.op} needs a number metric; ${e.metric} is a ${spec.type}`,
        });
      }
    });
  type Expectation = z.infer<typeof Expectation>;

  const CaseInput = z
    .looseObject({
      principal: z.string().min(1).describe('who the run acts for, e.g. user:alice'),
      tenant: z.string().min(1).describe('the principal\u2019s tenant, e.g. acme'),
    })
    .describe('The principal and tenant, plus the scenario\u2019s variables (account, amount, ...)');

  const Approver = z.strictObject({
    decision: z.enum(['approve', 'deny']).default('approve').describe('what the scripted human decides first'),
    ttlMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('validity of an approval; default the policy\u2019s approvalTtlMs'),
    renew: z.boolean().default(false).describe('approve a call again when it comes back (expired or invalidated)'),
    afterMs: z.number().int().min(0).max(60_000).default(0).describe('how long the human takes to decide'),
  });
  type Approver = z.infer<typeof Approver>;

  const Probe = z.strictObject({
    kind: z.literal('reuse_key_with_other_arguments'),
    changes: z
      .record(z.string(), z.unknown())
      .describe('fields merged into the first call\u2019s canonical arguments before resending under its key'),
  });
  type Probe = z.infer<typeof Probe>;

  const Account = z.strictObject({
    tenant: z.string().min(1),
    account: z.string().min(1),
    balanceMinor: z.number().int().nonnegative(),
    currency: z.string().regex(/^[A-Z]{3}$/),
  });

  const SetupRequest = z.strictObject({
    service: z.enum(vocab.services as [string, ...string[]], {
      error: (i) => `unknown service ${JSON.stringify(i.input)}; known: ${list(vocab.services)}`,
    }),
    method: z.enum(['POST', 'PUT', 'DELETE']).default('POST'),
    path: z.string().startsWith('/admin/').describe('an admin route of the service, e.g. /admin/stock'),
    body: z.unknown().optional(),
  });
  type SetupRequest = z.infer<typeof SetupRequest>;

  const Case = z
    .strictObject({
      name: z.string().min(1).max(120),
      description: z.string().optional(),
      // A string in the JSON Schema (scenarios come and go); checked against the scripted model's list here.
      scenario: z
        .string()
        .min(1)
        .refine((s) => vocab.scenarios.includes(s), {
          error: (i) => `unknown scenario ${JSON.stringify(i.input)}; known: ${list(vocab.scenarios)}`,
        })
        .describe(vocab.scenarioHelp),
      input: CaseInput,
      goal: z.string().optional(),
      strategy: z.enum(strategyNames() as [RetryStrategy, ...RetryStrategy[]]).default('same_key_replay'),
      services: z
        .array(
          z.enum(vocab.services as [string, ...string[]], {
            error: (i) => `unknown service ${JSON.stringify(i.input)}; known: ${list(vocab.services)}`,
          }),
        )
        .min(1)
        .optional()
        .describe(vocab.servicesHelp),
      accounts: z.array(Account).optional().describe('wallet accounts to seed; default input.account with 1,000,000'),
      setup: z
        .array(SetupRequest)
        .default([])
        .describe('admin requests sent to the fresh services before the run (stock, orders, capacity)'),
      policy: Policy.optional().describe('the policy the workers start with; default the built-in policy'),
      approver: Approver.optional().describe('the scripted human; default approve once, never renew'),
      faults: z.array(Fault).default([]),
      probe: Probe.optional(),
      expect: z.array(Expectation).min(1),
    })
    .superRefine((c, ctx) => {
      const held = c.faults.map((f, i) => [f, i] as const).filter(([f]) => f.at === 'tool.in_flight');
      for (const [, i] of held.slice(1)) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'at'], message: 'one tool.in_flight fault per case' });
      }
    });
  type Case = z.infer<typeof Case>;

  const Limit = z.number().int().min(1).max(20);

  const FaultProtocol = z
    .strictObject({
      format: z.literal(PROTOCOL_FORMAT, {
        error: (i) => `unsupported format ${JSON.stringify(i.input)}; this runner reads "${PROTOCOL_FORMAT}"`,
      }),
      description: z.string().optional(),
      seed: z.number().int().min(0).max(0xffff_ffff).describe('seeds the PRNG: same seed, same plan'),
      runDeadlineMs: z.number().int().min(5_000).max(600_000).describe('each run\u2019s one absolute deadline'),
      attemptLimits: z
        .strictObject({
          model: Limit.optional(),
          tool: Limit.optional(),
          reconcile: Limit.optional(),
          compensation: Limit.optional(),
        })
        .default({}),
      attemptTimeoutsMs: z
        .strictObject({
          model: z.number().int().min(500).optional(),
          tool: z.number().int().min(500).optional(),
          reconcile: z.number().int().min(500).optional(),
        })
        .optional()
        .describe('per-attempt caps; default model 30000, tool 3000, reconcile 2000'),
      cases: z.array(Case).min(1),
    })
    .superRefine((p, ctx) => {
      const seen = new Map<string, number>();
      p.cases.forEach((c, i) => {
        const first = seen.get(c.name);
        if (first !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['cases', i, 'name'],
            message: `duplicate case name (also cases[${first}])`,
          });
        }
        seen.set(c.name, i);
      });
    });
  type FaultProtocol = z.infer<typeof FaultProtocol>;
  return { Fault, Expectation, CaseInput, Approver, Probe, Account, SetupRequest, Case, FaultProtocol };
}

const BUILTIN = protocolSchemas(BUILTIN_VOCABULARY);
export const Fault = BUILTIN.Fault;
export type Fault = z.infer<typeof Fault>;
export const Expectation = BUILTIN.Expectation;
export type Expectation = z.infer<typeof Expectation>;
export const CaseInput = BUILTIN.CaseInput;
export const Approver = BUILTIN.Approver;
export type Approver = z.infer<typeof Approver>;
export const Probe = BUILTIN.Probe;
export type Probe = z.infer<typeof Probe>;
export const Account = BUILTIN.Account;
export const SetupRequest = BUILTIN.SetupRequest;
export type SetupRequest = z.infer<typeof SetupRequest>;
export const Case = BUILTIN.Case;
export type Case = z.infer<typeof Case>;
export const FaultProtocol = BUILTIN.FaultProtocol;
export type FaultProtocol = z.infer<typeof FaultProtocol>;

export interface FormatIssue {
  /** e.g. `cases[0].faults[1].do` */
  readonly path: string;
  readonly message: string;
}

/** The protocol file is not JSON or does not validate. Nothing has run. */
export class ProtocolFormatError extends Error {
  override readonly name = 'FaultProtocol.Invalid';
  constructor(
    readonly source: string,
    readonly issues: readonly FormatIssue[],
  ) {
    super(`${source} is not a valid fault protocol:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`);
  }
}

/** `['cases', 0, 'faults', 1, 'do']` -> `cases[0].faults[1].do` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : `${out ? '.' : ''}${String(seg)}`;
  return out || '(root)';
}

/** Validates parsed JSON; throws ProtocolFormatError naming every bad field. */
export function parseProtocol(
  raw: unknown,
  source = 'protocol',
  vocab: ProtocolVocabulary = BUILTIN_VOCABULARY,
): FaultProtocol {
  const schema = vocab === BUILTIN_VOCABULARY ? FaultProtocol : protocolSchemas(vocab).FaultProtocol;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data as FaultProtocol;
  const issues = parsed.error.issues.map((i) => {
    const keys = i.code === 'unrecognized_keys' ? i.keys : [];
    const path = formatPath(keys.length === 1 ? [...i.path, keys[0] as string] : i.path);
    return { path, message: i.message };
  });
  throw new ProtocolFormatError(source, issues);
}

/** Reads and validates a protocol file. */
export function loadProtocol(file: string, vocab: ProtocolVocabulary = BUILTIN_VOCABULARY): FaultProtocol {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ProtocolFormatError(file, [{ path: '(file)', message: (err as Error).message }]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ProtocolFormatError(file, [{ path: '(root)', message: `not JSON: ${(err as Error).message}` }]);
  }
  return parseProtocol(raw, file, vocab);
}
