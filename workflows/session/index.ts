/**
 * The governed session for any agent loop written by the team (the AI SDK adapter is ledgerloop/ai-sdk/workflow;
 * another loop's adapter is as thin): open it in the workflow, send each tool call through `call`, end it.
 */
export {
  GovernedSession,
  openGovernedSession,
  type GovernedSessionOptions,
  type SessionCall,
  type SessionResult,
} from './governed-session';
export { sessionDeclarations } from './declarations';
export { governedResult, type GovernedResult } from './tool-result';
