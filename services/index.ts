/**
 * `ledgerloop/services`: the downstream side of the HTTP contract (docs/services.md), as a library a user's own
 * Node HTTP service mounts. A service is its tables, its idempotent mutations (a zod body schema and a
 * synchronous `apply` run inside the commit transaction) and its reads; the library brings the idempotency record
 * (same key and arguments: the retained result; other arguments: 409), fences, the capability check, lookups,
 * seals, refusal counters and, on a lab start only, fault injection.
 *
 *   const service = await startService(ticketingService, { dbPath, capabilityKeys }); // listens
 *   const mounted = mountService(ticketingService, { db, capabilityKeys });          // or your own server
 *   http.createServer((req, res) => void mounted.handle(req, res));                  // or serve({ fetch: mounted.fetch })
 */
export {
  mountService,
  openServiceDatabase,
  startService,
  type MountedService,
  type MountOptions,
  type ReadRoute,
  type RunningService,
  type ServiceDefinition,
  type ServiceHostOptions,
} from './service-host';
export {
  mutation,
  mutationHandler,
  parseMutationHeaders,
  type Mutation,
  type MutationHeaders,
  type MutationSpec,
  type ServiceRuntime,
} from './idempotent-route';
export {
  BusinessRejection,
  DEFAULT_RETENTION_MS,
  IdempotencyStore,
  type AppliedEffect,
  type BusinessRejectionOptions,
  type LookupResult,
} from './idempotency-store';
export { ForwardOperationKey, refuseMissingForward } from './compensation';
export { registerStandardAdminRoutes, registerStandardRoutes } from './standard-routes';
export { verifyLookupCapability, type LookupCapabilityRequest } from './lookup-capability';
export { Id, parseAdminBody } from './body-schemas';
export {
  closeServer,
  createHttpServer,
  dropConnection,
  errorJson,
  HttpError,
  HttpErrorCode,
  json,
  listen,
  readJsonBody,
  Router,
  type Fetch,
  type Handler,
  type RequestContext,
  type RouterOptions,
} from './http-kit';
export {
  PgOperations,
  OPERATIONS_TABLE,
  type Operation,
  type OperationEffect,
  type OperationOutcome,
  type PgLookupResult,
  type PgOperationsOptions,
} from './pg/operations';
export {
  operationMiddleware,
  operationRoutes,
  type CallerCheck,
  type OperationEnv,
  type OperationMiddlewareOptions,
  type OperationVariables,
} from './pg/middleware';
export { expressOperation, expressOperationRoutes, type OperationLocals } from './pg/express';
export { labAdminApp, type LabAdminOptions, type LabStats } from './pg/lab-admin';
export { FaultInjector } from './faults';
export { runServiceMain, parseServiceFlags, type ServiceFlags } from './service-main';
export { ADMIN_TOKEN_ENV, ServiceConfigError, type AdminConfig } from './admin-listener';
export {
  DownstreamErrorCode,
  HEADER_ARGS_HASH,
  HEADER_FENCE,
  HEADER_INTENT_AT,
  HEADER_KEY,
  HEADER_REPLAYED,
  HEADER_RETAINED_UNTIL,
  LOOKUP_ARGUMENTS_HASH,
  lookupCapabilityScope,
  type OperationRecord,
  type ServiceContract,
} from '../src/downstream/protocol';
export {
  CAPABILITY_HEADER,
  CapabilityError,
  verifyCapability,
  type CapabilityTokenClaims,
} from '../src/capability/capability';
export { keySetFromEnv, keySetFromJwks, type CapabilityKeySet } from '../src/capability/capability-keys';
// The database a service's tables, mutations and reads are given (better-sqlite3's, whose types this package
// depends on).
export type { Database } from 'better-sqlite3';
