/**
 * Governed tools for the OpenAI Agents SDK: `tool()`s of `@openai/agents-core` whose `execute` runs in the team's
 * workflow, inside its `Runner.run` loop, through the session's call runner (workflows/session/governed-session.ts),
 * the same one the AI SDK adapter uses. The thin part: `parameters` is the declaration's zod schema, the Agents
 * call id (`details.toolCall.callId`) is the provider call id, and the step is the count of model responses so
 * far (`runContext.usage.requests`). What the model reads is always a `GovernedResult`, as JSON text, never a
 * throw.
 *
 * Arguments the SDK's own parse refuses (the model broke the schema) never reach `execute`; the SDK hands them to
 * a `ModelBehaviorError`, which the tool's `invoke` catches and answers by sending the raw arguments to the
 * session too, so the refusal is the session's (recorded in the ledger, `refused` to the model), not the SDK's
 * generic message; `invoke` is wrapped, not `errorFunction`, because the SDK hides the call from `errorFunction`
 * by default (`OPENAI_AGENTS_DONT_LOG_TOOL_DATA`). Text that is not JSON at all the SDK's runner answers itself,
 * with its fixed message, before any tool runs. Any other error is a defect of this code and
 * is thrown on, so the loop fails and the session ends it typed (`session.fail`).
 *
 * `needsApproval` is not set: the SDK's approval interrupts the run and returns it to the caller, which is not a
 * durable wait. An approval the policy asks for is the session's, answered in the console.
 */
import { ModelBehaviorError, tool, type FunctionTool, type RunContext } from '@openai/agents-core';
import type { z } from 'zod';
import type { AnyTool } from '../../src/domain/tool';
import { sessionDeclarations } from '../session/declarations';
import type { GovernedSession } from '../session/governed-session';

type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];

/** The Agents tools, one per declaration, in the order named (pass them as the `Agent`'s `tools`). */
export type GovernedAgentTools = FunctionTool<unknown, z.ZodObject, string>[];

/**
 * The Agents SDK tools for `names`, each a declaration of the worker's tools module (the `tools` of its
 * `LedgerloopPlugin`). A name the module does not declare fails the workflow (`Session.Misused`) before any call.
 * Each declaration's `args` must be a zod object (the SDK's strict function schema); its result is the
 * `GovernedResult` as JSON text.
 */
export function governedAgentTools(session: GovernedSession, names: readonly string[]): GovernedAgentTools {
  return sessionDeclarations(session, names, 'governedAgentTools').map((declaration) =>
    agentTool(session, declaration),
  );
}

function agentTool(session: GovernedSession, declaration: AnyTool): FunctionTool<unknown, z.ZodObject, string> {
  const run = async (args: unknown, context: RunContext | undefined, callId: string | undefined) =>
    JSON.stringify(
      await session.call({
        tool: declaration.name,
        args,
        providerCallId: callId ?? '',
        step: Math.max(1, context?.usage.requests ?? 1),
      }),
    );
  const base = tool({
    name: declaration.name,
    description: declaration.description,
    parameters: declaration.args as z.ZodObject,
    execute: (args: unknown, context?: RunContext, details?: ToolCallDetails) =>
      run(args, context, details?.toolCall?.callId),
    // Every error comes out of `invoke`, below: a refused parse goes to the session, anything else is thrown on.
    errorFunction: null,
  });
  return {
    ...base,
    invoke: async (context, input, details) => {
      try {
        return await base.invoke(context, input, details);
      } catch (err) {
        if (!(err instanceof ModelBehaviorError)) throw err;
        return run(rawArguments(input), context, details?.toolCall?.callId);
      }
    },
  };
}

/** The model's arguments as it wrote them: parsed JSON, or the text itself (the session's validation refuses it). */
function rawArguments(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
