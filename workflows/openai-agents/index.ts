/**
 * `ledgerloop/openai-agents/workflow`: the workflow side of the OpenAI Agents SDK under Temporal (docs/openai-agents.md).
 * Import it in workflow code beside `Agent`, `tool()` and `Runner` from `@openai/agents-core` (never the
 * `@openai/agents` umbrella, which cannot load in the sandbox):
 *
 *   const runner = new Runner({ modelProvider: new ActivityModelProvider(), tracingDisabled: true });
 *   const result = await runner.run(agent, message, { maxTurns: 6 });
 *
 * Governed tools (beside `LedgerloopPlugin({ ownWorkflows: true })` on the worker) replace the agent's effect tools:
 *
 *   const session = await governedSession({ principal, identityToken, deadlineAt });
 *   const agent = new Agent({ ..., tools: [getOrder, ...governedAgentTools(session, ['refund_order'])] });
 *   return session.end(String((await runner.run(agent, message)).finalOutput ?? ''));
 *
 * The worker side (the model activity and the bundle changes) is `OpenAIAgentsPlugin` from `ledgerloop/openai-agents`.
 */
import './sandbox-globals';

export { ActivityModel, ActivityModelProvider, AGENTS_MODEL_ACTIVITY } from './activity-model';
export { DataCloneError } from './structured-clone';
export { governedAgentTools, type GovernedAgentTools } from './governed-tools';
export {
  GovernedSession,
  openGovernedSession as governedSession,
  type GovernedSessionOptions,
  type SessionCall,
  type SessionResult,
} from '../session/governed-session';
export type { GovernedResult } from '../session/tool-result';
