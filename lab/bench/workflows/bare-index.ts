/**
 * The bare baseline's own bundle: bareLoop alone. Kept apart from agentRun's bundle because, with reused V8
 * contexts, every new workflow evaluates every module of its bundle: a bundle holding both would charge the
 * bare runs for the governed modules (tool schemas, reducer, hashing) too.
 */
export { bareLoop } from './bare.workflow';
