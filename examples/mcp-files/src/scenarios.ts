/**
 * The scripted model's conversation for this project (docs/models.md): the "model" writes a note with the
 * `files` server's `write_file`, then reads it back and answers. Any `ModelProvider` fits in its place.
 */
import type { Scenario } from 'ledgerloop/worker';

export const filesScenarios: Readonly<Record<string, Scenario>> = {
  /** Write `vars.content` to `vars.path`, read it back, then answer with what the reads said. */
  'save-note': (vars) => [
    { proposals: [{ name: 'files_write_file', arguments: { path: vars['path'], content: vars['content'] } }] },
    { proposals: [{ name: 'files_read_text_file', arguments: { path: vars['path'] } }] },
    { final: (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ') || 'nothing'}.` },
  ],
};
