/**
 * `ledgerloop/testing`: a real Temporal dev server for a project's own tests (the Temporal CLI's
 * `temporal server start-dev`, found as `TEMPORAL_CLI`, on PATH, or the pinned one `ledgerloop setup` fetched into the
 * per-user cache), with the search attributes Ledgerloop's workflow writes registered. Nothing is downloaded here.
 *
 *   const server = await startDevServer({ headless: true, ephemeral: true });
 *   try { ... createWorker({ address: server.address, ... }) ... } finally { await server.stop(); }
 */
export {
  connectOrStart,
  DevServerStartError,
  ensureSearchAttributes,
  getFreePort,
  getFreePorts,
  startDevServer,
  type DevServer,
  type DevServerOptions,
  type ExternalServer,
  type ServerHandle,
} from '../server/dev-server';
export { TemporalBinaryMissingError, resolveTemporalCli } from '../server/temporal-binaries';
export { generateCodecKeys } from '../../src/codec/data-converter';
