/**
 * Governed tools for the AI SDK: `tool()`s whose `execute` runs in the team's workflow, through the session's call
 * runner (workflows/session/governed-session.ts). The thin part: the tool's `inputSchema` is the Ledgerloop
 * declaration's zod schema, `toolCallId` is the provider call id, and the step is read from the messages the
 * model was sent. What `execute` returns is always a `GovernedResult` the model reads, never a throw.
 */
import { tool, type FlexibleSchema, type ModelMessage, type Tool, type ToolExecutionOptions } from 'ai';
import { sessionDeclarations } from '../session/declarations';
import type { GovernedSession } from '../session/governed-session';
import type { GovernedResult } from '../session/tool-result';

/** The AI SDK tools, by the declarations' names (the names the model calls). */
export type GovernedTools = Record<string, Tool<unknown, GovernedResult>>;

/**
 * The AI SDK tools for `names`, each a declaration of the worker's tools module (the `tools` of its
 * `LedgerloopPlugin`). A name the module does not declare fails the workflow (`Session.Misused`) before any call.
 */
export function governedTools(session: GovernedSession, names: readonly string[]): GovernedTools {
  const tools: GovernedTools = {};
  for (const declaration of sessionDeclarations(session, names, 'governedTools')) {
    tools[declaration.name] = tool({
      description: declaration.description,
      inputSchema: declaration.args as FlexibleSchema<unknown>,
      execute: (args: unknown, options: ToolExecutionOptions<unknown>) =>
        session.call({
          tool: declaration.name,
          args,
          providerCallId: options.toolCallId,
          step: stepOf(options.messages),
        }),
    });
  }
  return tools;
}

/** The loop's step a call belongs to: one more than the model's answers before it. */
function stepOf(messages: readonly ModelMessage[] | undefined): number {
  return 1 + (messages ?? []).filter((m) => m.role === 'assistant').length;
}
