/**
 * The scripted model's conversations for this project (docs/models.md): what the "model" proposes each turn. A
 * real model is a provider given to the worker instead (`openAIModel()` with OPENAI_API_KEY / OPENAI_BASE_URL).
 */
import type { Scenario, ScriptedProposal, ScriptedTurn } from 'ledgerloop/worker';

/** The opening the run's variables describe, in `project` (default the variables' own). */
function opening(vars: Readonly<Record<string, unknown>>, project: unknown = vars['project']): ScriptedProposal {
  return {
    name: 'ticketing_open_ticket',
    arguments: {
      project,
      title: vars['title'],
      ...(vars['labels'] === undefined ? {} : { labels: vars['labels'] }),
      ...(vars['due'] === undefined ? {} : { due: vars['due'] }),
    },
  };
}

const done: ScriptedTurn = {
  final: (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ') || 'nothing'}.`,
};

export const ticketingScenarios: Readonly<Record<string, Scenario>> = {
  /** Open one ticket from the run's variables, then answer. */
  'open-ticket': (vars) => [{ proposals: [opening(vars)] }, done],
  /**
   * Open the ticket in two projects in one turn (`project` and `secondProject`). When one opening fails (the
   * `archive` project refuses new tickets), the turn's other opening is offset by its compensation, the cancel.
   */
  'open-pair': (vars) => [{ proposals: [opening(vars), opening(vars, vars['secondProject'])] }, done],
};
