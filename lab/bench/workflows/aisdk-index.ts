/**
 * The AI SDK peer's own bundle: aiSdkLoop alone (built with `AiSdkPlugin`'s bundler options, lab/bench/lib/stack.ts),
 * for the reason every loop of the bench has its own (bare-index.ts).
 */
export { aiSdkLoop } from './aisdk.workflow';
