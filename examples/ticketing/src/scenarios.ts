/**
 * The scripted model's conversations for this project (docs/models.md): what the "model" proposes each turn. A
 * real model is a provider given to the worker instead (`openAIModel()` with OPENAI_API_KEY / OPENAI_BASE_URL).
 */
import type { Scenario } from 'ledgerloop';

export const ticketingScenarios: Readonly<Record<string, Scenario>> = {
  /** Open one ticket from the run's variables, then answer. */
  'open-ticket': (vars) => [
    {
      proposals: [
        {
          name: 'ticketing_open_ticket',
          arguments: {
            project: vars['project'],
            title: vars['title'],
            ...(vars['labels'] === undefined ? {} : { labels: vars['labels'] }),
            ...(vars['due'] === undefined ? {} : { due: vars['due'] }),
          },
        },
      ],
    },
    { final: (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ') || 'nothing'}.` },
  ],
};
