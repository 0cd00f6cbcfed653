/**
 * The heavier peer's own bundle: peerLoop alone, for the reason bareLoop has its own (bare-index.ts): with reused
 * V8 contexts every new workflow evaluates every module of its bundle, so a shared bundle would charge one loop
 * for the other's modules.
 */
export { peerLoop } from './peer.workflow';
