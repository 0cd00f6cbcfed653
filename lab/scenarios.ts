/**
 * The lab's canned conversations for the scripted model (src/planner/scripted-model.ts). A scenario turns the
 * run's variables into the proposals the "model" makes each turn; `final` ends the run. Scenarios are what the
 * demo, the tests, the bench and the fault protocol name in `planner.scenario`; the runtime knows none of them.
 */
import type { Observation } from '../src/domain/activity-contracts';
import { scriptedModel, type Scenario } from '../src/planner/scripted-model';
import type { ModelProvider } from '../src/planner/model';
import { configValue } from '../src/config';

function summarize(observations: readonly Observation[]): string {
  return observations.map((o) => `${o.toolName}: ${o.state}`).join(', ') || 'nothing to report';
}

export const scenarios: Readonly<Record<string, Scenario>> = {
  /** The essay's opening: one debit, then a final answer. */
  'wallet-debit': (vars) => [
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } }] },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /** The model emits arguments that are not JSON: a typed rejection, never a dispatch. */
  'malformed-arguments': () => [
    { proposals: [{ name: 'wallet_debit', arguments: '{"account": "acct_1", "amount": {"minor": 12' }] },
    { final: (obs) => `Stopped: ${summarize(obs)}.` },
  ],
  /**
   * A model whose arguments nest `vars.depth` arrays deep (`[[[…]]]`, default 60,000: 120 KB of text), proposed for
   * `vars.tool` (default `wallet_debit`): refused typed before anything parses them, and the run goes on (issue #39,
   * hole 3: such a proposal used to fail every workflow task of the run).
   */
  'deep-arguments': (vars) => {
    const depth = Math.max(1, Math.min(1_000_000, Math.floor(Number(vars.depth ?? 60_000))));
    const tool = typeof vars.tool === 'string' ? vars.tool : 'wallet_debit';
    return [
      { proposals: [{ name: tool, arguments: `${'['.repeat(depth)}${']'.repeat(depth)}` }] },
      // the model reads the refusal's code: what it says back is the proof that the observation reached it
      {
        final: (obs) => `Stopped: ${obs.map((o) => `${o.toolName}: ${o.state} ${o.error?.code ?? 'ok'}`).join(', ')}.`,
      },
    ];
  },
  /** A debit on another tenant's resource or above the policy limit: denied at dispatch. */
  'over-limit-debit': (vars) => [
    {
      proposals: [
        { name: 'wallet_debit', arguments: { account: vars.account, amount: { minor: 10_000_000, currency: 'EUR' } } },
      ],
    },
    { final: (obs) => `Stopped: ${summarize(obs)}.` },
  ],
  /** Two debits in two turns: the second one (vars.amount2) typically needs a human approval. */
  'two-debits': (vars) => [
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } }] },
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount2 } }] },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /**
   * A model that tries to reach another tenant however it can phrase it: an explicit tenant field, a
   * tenant-qualified account id, and a bare id that exists only in the other tenant.
   */
  'cross-tenant': (vars) => [
    {
      proposals: [
        {
          name: 'wallet_debit',
          arguments: { account: vars.foreignAccount, amount: { minor: 500, currency: 'EUR' }, tenant: 'globex' },
        },
        {
          name: 'wallet_debit',
          arguments: { account: `globex/${String(vars.foreignAccount)}`, amount: { minor: 501, currency: 'EUR' } },
        },
        { name: 'wallet_debit', arguments: { account: vars.foreignAccount, amount: { minor: 502, currency: 'EUR' } } },
      ],
    },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /**
   * A gullible model: it follows any instruction it can read in tool output. After its debit, if an
   * observation mentions "refund everything", it proposes refunding the debit.
   */
  gullible: (vars) => [
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } }] },
    {
      decide: (obs) =>
        JSON.stringify(obs).toLowerCase().includes('refund everything')
          ? {
              proposals: [
                {
                  name: 'wallet_refund',
                  arguments: { account: vars.account, amount: vars.amount, debitOperationKey: `op_${'0'.repeat(40)}` },
                },
              ],
            }
          : { final: (o) => `Done: ${summarize(o)}.` },
    },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /** The same model, already injected through some other channel: it proposes the refund regardless. */
  'injected-refund': (vars) => [
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } }] },
    {
      proposals: [
        {
          name: 'wallet_refund',
          arguments: { account: vars.account, amount: vars.amount, debitOperationKey: `op_${'0'.repeat(40)}` },
        },
      ],
    },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /** A model stuck in a loop: the same debit, turn after turn. No-progress detection ends it. */
  stuck: (vars) =>
    Array.from({ length: 16 }, () => ({
      proposals: [
        { name: 'wallet_debit', arguments: { account: vars.account, amount: { minor: 100, currency: 'EUR' } } },
      ],
    })),
  /**
   * A model that repeats itself: the same debit twice in one turn, again in the next turn, and a deliberate
   * second charge of the same amount with its own memo (the debit's intent reference).
   */
  'repeat-debit': (vars) => [
    {
      proposals: [
        { name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } },
        { name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } },
      ],
    },
    {
      proposals: [
        { name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } },
        { name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount, memo: 'second delivery' } },
      ],
    },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /** `vars.count` different debits side by side in one turn (100, 101, ... minor units), then an answer. */
  'parallel-debits': (vars) => [
    {
      proposals: Array.from({ length: Math.max(1, Math.min(64, Math.floor(Number(vars.count ?? 4)))) }, (_, i) => ({
        name: 'wallet_debit',
        arguments: { account: vars.account, amount: { minor: 100 + i, currency: 'EUR' } },
      })),
    },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /** A model that never stops proposing: ends on the turn budget. */
  /** One debit, then a model that has nothing more to say (its script runs out): the run stops `model_failed`. */
  'debit-then-silence': (vars) => [
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } }] },
  ],
  'endless-debits': (vars) =>
    Array.from({ length: 64 }, (_, i) => ({
      proposals: [
        { name: 'wallet_debit', arguments: { account: vars.account, amount: { minor: 100 + i, currency: 'EUR' } } },
      ],
    })),
  /**
   * Benchmarks (lab/bench/): `vars.turns` turns of one small debit each (100 + turn minor units of EUR, on
   * `vars.account`), then a final answer. Each turn is one model call plus one tool call.
   */
  'n-debits': (vars) => [
    ...Array.from({ length: Math.max(0, Math.floor(Number(vars.turns ?? 1))) }, (_, i) => ({
      proposals: [
        { name: 'wallet_debit', arguments: { account: vars.account, amount: { minor: 100 + i, currency: 'EUR' } } },
      ],
    })),
    { final: (obs: readonly Observation[]) => `Done: ${summarize(obs)}.` },
  ],
  /**
   * The essay's parallel turn: reserve stock, debit the wallet and schedule the shipment as THREE calls in ONE
   * turn (each tracked by its own call id, never by position), then mark the order fulfilled (the irreversible
   * pivot, only once the three compensable steps are settled), then answer.
   * Vars: sku, quantity, account, amount, orderId, address.
   */
  'order-fulfilment': (vars) => [
    {
      proposals: [
        { name: 'inventory_reserve', arguments: { sku: vars.sku, quantity: vars.quantity } },
        { name: 'wallet_debit', arguments: { account: vars.account, amount: vars.amount } },
        { name: 'shipping_schedule', arguments: { orderId: vars.orderId, address: vars.address } },
      ],
    },
    { proposals: [{ name: 'orders_mark_fulfilled', arguments: { orderId: vars.orderId } }] },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
  /** One email (irreversible: it always waits for a human approval), then answer. Vars: to, template[, vars]. */
  'send-email': (vars) => [
    {
      proposals: [
        {
          name: 'notifications_send_email',
          arguments: { to: vars.to, template: vars.template, vars: vars.vars ?? {} },
        },
      ],
    },
    { final: (obs) => `Done: ${summarize(obs)}.` },
  ],
};

/** The scripted model with the lab's scenarios. */
export function labScriptedModel(): ModelProvider {
  return scriptedModel(scenarios);
}

/**
 * The models a lab or demo worker process adds: the scripted one with the lab's scenarios, only when
 * LEDGERLOOP_SCRIPTED_MODEL is exactly "1" (the lab's workers, the demo, compose's demo worker).
 */
export function scriptedModelsFromEnv(env: NodeJS.ProcessEnv): ModelProvider[] {
  return configValue('LEDGERLOOP_SCRIPTED_MODEL', env) === true ? [labScriptedModel()] : [];
}
