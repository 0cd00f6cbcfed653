/**
 * `ledgerloop/testing`: a real Temporal dev server for a project's own tests (the Temporal CLI's
 * `temporal server start-dev`, found as `TEMPORAL_CLI`, on PATH, or the pinned one `ledgerloop setup` fetched into the
 * per-user cache), with the search attributes Ledgerloop's workflow writes registered; a PostgreSQL (`DATABASE_URL`,
 * or a private server from the machine's binaries); the vendor payments stand-in's entry; and a loopback proxy that
 * loses or holds an HTTP downstream's answers on purpose (`startFaultProxy`). Nothing is downloaded here.
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
export { PostgresUnavailableError, startTestPostgres, type TestPostgres, type TestPostgresOptions } from './postgres';
export { VENDOR_PAYMENTS_MAIN } from './vendor-payments';
export { startFaultProxy, type FaultProxy, type ProxyFault } from './http-fault-proxy';
