/**
 * The governed AI SDK agent's own bundle: aiSdkGovernedLoop alone, built as a team builds it (`AiSdkPlugin` and
 * `LedgerloopPlugin({ ownWorkflows: true })`, lib/stack.ts), for the reason every loop of the bench has its own
 * (bare-index.ts).
 */
export { aiSdkGovernedLoop } from './aisdk-governed.workflow';
