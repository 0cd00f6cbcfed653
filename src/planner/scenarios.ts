/**
 * Canned conversations for the scripted model. A scenario turns the run's variables into the proposals the
 * "model" makes each turn; `final` ends the run. Scenarios are what the demo, the tests and the fault protocol
 * name in `planner.scenario`.
 */
import type { Observation } from '../domain/activity-contracts';

export interface ScriptedProposal {
  readonly name: string;
  /** Either an object (serialized as the model would) or raw text, to model malformed output. */
  readonly arguments: unknown;
}

export type ScriptedTurn =
  | { readonly proposals: readonly ScriptedProposal[] }
  | { readonly final: (observations: readonly Observation[]) => string };

export type Scenario = (vars: Readonly<Record<string, unknown>>) => readonly ScriptedTurn[];

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
  /** A debit on another tenant's resource or above the policy limit: denied at dispatch. */
  'over-limit-debit': (vars) => [
    { proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: { minor: 10_000_000, currency: 'EUR' } } }] },
    { final: (obs) => `Stopped: ${summarize(obs)}.` },
  ],
  /** A model that never stops proposing: ends on the turn budget. */
  'endless-debits': (vars) =>
    Array.from({ length: 64 }, (_, i) => ({
      proposals: [{ name: 'wallet_debit', arguments: { account: vars.account, amount: { minor: 100 + i, currency: 'EUR' } } }],
    })),
};
