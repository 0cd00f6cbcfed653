/**
 * The attribution section's switches (lab/bench/sections/attribution.ts): one mechanism of the governed run each,
 * taken out ("off": its share is what the run saves without it) or, where the run cannot work without it, done
 * twice ("twice": its share is what doing it once more costs). Every switch lives in the bench's build only: module
 * replacements in a bench bundle (lab/bench/lib/bundles.ts) or in a bench worker process
 * (lab/bench/switches/worker-switch.cjs), bench worker options, and how the bench starts its runs.
 * test/unit/bench-switches-out-of-product.test.ts shows the shipped bundle and the package hold none of them.
 *
 * The reference they are taken out of is the governed run with every mechanism on, as a deployment with cross-run
 * limits runs it: payloads encrypted (the message guard over the AES-GCM codec), a signed identity token verified at
 * the opening, the built-in policy with a tenant-wide rate limit on debits counted in the quota store (SQLite, as on
 * one host), search attributes and summaries. The latency and throughput sections' governed run has no codec and
 * no cross-run limit: it is this reference without the `codec` and `quota` switches' shares.
 */
import path from 'node:path';
import { REPO_ROOT } from '../../../host/worker/bundle';
import { DEFAULT_POLICY, type Policy } from '../../../src/domain/policy-format';
import type { Replacements } from '../lib/bundles';
import type { SwitchId } from './marks';

/** How a cell's workers and runs are set up. */
export interface CellPlan {
  /** Modules replaced in the cell's workflow bundle, and interceptor modules added to it. */
  readonly bundle: { readonly replace: Replacements; readonly interceptorModules: readonly string[] };
  /** Modules replaced in the cell's worker processes. */
  readonly worker: Replacements;
  /** Payloads encrypted by the worker and the client (the message guard is on either way). */
  readonly codec: boolean;
  /** The policy the worker holds runs to: the built-in one (with the tenant limit when `quota`), or the smallest. */
  readonly policy: 'built-in' | 'minimal';
  /** Cross-run limits counted in a quota store (each cell its own SQLite file). */
  readonly quota: boolean;
  /** `signed`: a start token minted per run; `placeholder`: a short string, never verified. */
  readonly token: 'signed' | 'placeholder';
  /** `agent-run`: as `startAgentRun` starts it; `plain`: no search attributes, static summary or details. */
  readonly start: 'agent-run' | 'plain';
}

export interface MechanismSwitch {
  readonly id: SwitchId;
  /** The mechanism, as the report names it. */
  readonly mechanism: string;
  readonly how: 'off' | 'twice';
  /** What the switch changes, in a sentence (the report prints it). */
  readonly what: string;
  /** The reference plan with this switch applied. */
  plan(reference: CellPlan): CellPlan;
}

const runtime = (...parts: string[]): string => path.join(REPO_ROOT, ...parts);
const stub = (...parts: string[]): string => path.join(__dirname, ...parts);

export const RUNTIME_MODULES = {
  canonical: runtime('src', 'domain', 'canonical.ts'),
  evaluate: runtime('src', 'policy', 'evaluate.ts'),
  authorize: runtime('activities', 'authorize.activities.ts'),
  verify: runtime('src', 'identity', 'verify.ts'),
  ledger: runtime('workflows', 'ledger.ts'),
  runView: runtime('workflows', 'run-view.ts'),
  workflowZod: runtime('host', 'worker', 'workflow-zod.ts'),
} as const;

/** A debit limit per tenant across runs (the most a policy allows per window): counted, never reached by a cell. */
export const TENANT_DEBIT_LIMIT = { max: 10_000, perMs: 60_000, per: 'tenant' } as const;

/** The built-in policy with `TENANT_DEBIT_LIMIT` on debits: the reference's. */
export const QUOTA_POLICY: Policy = {
  ...DEFAULT_POLICY,
  version: 'bench-quota/1',
  rules: DEFAULT_POLICY.rules.map((r) => (r.action === 'wallet.debit' ? { ...r, rateLimit: TENANT_DEBIT_LIMIT } : r)),
};

/** The smallest policy a run can be held to that still counts the same limit (the `authorization` switch). */
export const MINIMAL_POLICY = {
  version: 'bench-minimal/1',
  rules: [{ action: 'wallet.debit', rateLimit: TENANT_DEBIT_LIMIT }],
} as const;

export const REFERENCE: CellPlan = {
  bundle: { replace: {}, interceptorModules: [] },
  worker: {},
  codec: true,
  policy: 'built-in',
  quota: true,
  token: 'signed',
  start: 'agent-run',
};

const inBundle = (p: CellPlan, replace: Replacements, interceptorModules: readonly string[] = []): CellPlan => ({
  ...p,
  bundle: {
    replace: { ...p.bundle.replace, ...replace },
    interceptorModules: [...p.bundle.interceptorModules, ...interceptorModules],
  },
});
const inWorker = (p: CellPlan, replace: Replacements): CellPlan => ({ ...p, worker: { ...p.worker, ...replace } });

export const SWITCHES: readonly MechanismSwitch[] = [
  {
    id: 'codec',
    mechanism: 'the payload codec',
    how: 'off',
    what: 'worker and client encrypt no payload (the message guard stays)',
    plan: (p) => ({ ...p, codec: false }),
  },
  {
    id: 'identity',
    mechanism: 'identity verification',
    how: 'off',
    what: "the run's token is a placeholder and the worker verifies none (src/identity/verify.ts stubbed)",
    plan: (p) => ({ ...inWorker(p, { [RUNTIME_MODULES.verify]: stub('verify.off.ts') }), token: 'placeholder' }),
  },
  {
    id: 'authorization',
    mechanism: 'the policy and authorization at dispatch',
    how: 'off',
    what:
      'the workflow allows every call without the rules, the signer signs without re-deriving or re-evaluating it, ' +
      'and the run holds a one-rule policy',
    plan: (p) => ({
      ...inWorker(inBundle(p, { [RUNTIME_MODULES.evaluate]: stub('workflows', 'evaluate.off.ts') }), {
        [RUNTIME_MODULES.authorize]: stub('authorize.off.ts'),
      }),
      policy: 'minimal',
    }),
  },
  {
    id: 'quota',
    mechanism: 'the cross-run quota (the quota store; no quota workflow exists any more)',
    how: 'off',
    what: 'no cross-run limit in the policy, no quota store: no reserveQuota activity',
    plan: (p) => ({ ...p, quota: false }),
  },
  {
    id: 'ledger-events',
    mechanism: 'ledger events (their list and log lines)',
    how: 'off',
    what: 'the ledger keeps no event list and writes no log line; each event is still built and reduced',
    plan: (p) => inBundle(p, { [RUNTIME_MODULES.ledger]: stub('workflows', 'ledger.events-off.ts') }),
  },
  {
    id: 'reducer',
    mechanism: 'the reducer',
    how: 'twice',
    what: 'every event is applied to a second projection by the same reducer (the run decides from it)',
    plan: (p) => inBundle(p, { [RUNTIME_MODULES.ledger]: stub('workflows', 'ledger.reducer-twice.ts') }),
  },
  {
    id: 'zod',
    mechanism: 'zod validation and the tool schemas in the bundle',
    how: 'off',
    what: 'zod is not bundled; every workflow-side schema accepts anything (the worker keeps its zod)',
    plan: (p) => inBundle(p, { [RUNTIME_MODULES.workflowZod]: stub('workflows', 'zod.off.ts') }),
  },
  {
    id: 'hashing',
    mechanism: 'canonical hashing',
    how: 'twice',
    what: 'every canonical form and SHA-256 is computed twice, in the workflow and in the worker',
    plan: (p) =>
      inWorker(inBundle(p, { [RUNTIME_MODULES.canonical]: stub('workflows', 'canonical.twice.ts') }), {
        [RUNTIME_MODULES.canonical]: stub('workflows', 'canonical.twice.ts'),
      }),
  },
  {
    id: 'search-attributes',
    mechanism: 'search attributes and summaries',
    how: 'off',
    what: 'no search attribute, current details or static summary, and no activity or timer summary',
    plan: (p) => ({
      ...inBundle(p, { [RUNTIME_MODULES.runView]: stub('workflows', 'run-view.off.ts') }, [
        stub('workflows', 'summaries-off.ts'),
      ]),
      start: 'plain',
    }),
  },
];

/** The switches `spec` names (ids, comma-separated; default all), in catalogue order. */
export function switchesNamed(spec: string | undefined): MechanismSwitch[] {
  if (!spec?.trim()) return [...SWITCHES];
  const ids = new Set(spec.split(',').map((s) => s.trim()));
  const known = new Set<string>(SWITCHES.map((s) => s.id));
  const unknown = [...ids].filter((id) => !known.has(id));
  if (unknown.length > 0) throw new Error(`unknown switch(es) ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  return SWITCHES.filter((s) => ids.has(s.id));
}

/** The policy document a plan's worker holds (`quota: false` takes the limit out of the reference's). */
export function policyOf(plan: CellPlan): Policy | typeof MINIMAL_POLICY {
  if (plan.policy === 'minimal') return MINIMAL_POLICY;
  return plan.quota ? QUOTA_POLICY : DEFAULT_POLICY;
}
