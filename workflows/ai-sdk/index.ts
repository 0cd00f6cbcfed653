/**
 * `ledgerloop/ai-sdk/workflow`: governed tools for an AI SDK agent, imported by the team's workflow code (under
 * `@temporalio/ai-sdk`'s `AiSdkPlugin` and `LedgerloopPlugin({ ownWorkflows: true })` on the worker).
 *
 *   const session = await governedSession({ principal, identityToken, deadlineAt });
 *   const { text } = await generateText({ model, prompt, tools: governedTools(session, ['refund_order']) });
 *   return session.end(text);
 */
export { governedTools, type GovernedTools } from './governed-tools';
export {
  GovernedSession,
  openGovernedSession as governedSession,
  type GovernedSessionOptions,
  type SessionCall,
  type SessionResult,
} from '../session/governed-session';
export type { GovernedResult } from '../session/tool-result';
