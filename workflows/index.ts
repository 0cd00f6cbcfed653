/** Everything the worker bundles: workflow functions and their message definitions. */
export { agentRun } from './agent-run.workflow';
export { ledgerQuery, resolveCallUpdate } from './definitions';
export { lookUpCall, settleAbandoned } from './console-actions.workflow';
