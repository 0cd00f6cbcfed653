/**
 * The model id the AI SDK peer asks `temporalProvider` for. A module of its own: the client side (lib/runs.ts)
 * needs the id without loading `ai/test`, an ES module only the peer's worker loads.
 */
export const AISDK_MODEL_ID = 'bench-n-debits';
