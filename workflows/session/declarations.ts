/**
 * The declarations an adapter builds its loop's tools from (the AI SDK's `governedTools`, the Agents SDK's
 * `governedAgentTools`): each name looked up in the worker's tools module, the session's registry. A name it does
 * not declare fails the workflow (`Session.Misused`) before any call, so no loop runs with a tool the session
 * cannot govern.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { AnyTool } from '../../src/domain/tool';
import { Failure } from '../../src/domain/failures';
import type { GovernedSession } from './governed-session';

/** The declarations for `names`, in order; `adapter` names the caller in the failure's message. */
export function sessionDeclarations(session: GovernedSession, names: readonly string[], adapter: string): AnyTool[] {
  return names.map((name) => {
    const declaration = session.tools.get(name);
    if (declaration === undefined)
      throw ApplicationFailure.create({
        type: Failure.SessionMisused,
        nonRetryable: true,
        message: `${adapter}: no tool "${String(name)}" is declared; known: ${session.tools.names().join(', ')}`,
      });
    return declaration;
  });
}
