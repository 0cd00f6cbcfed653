/**
 * Every read is scoped. A service's record reads (`ServiceDefinition.reads`, e.g. `GET /v1/accounts/:tenant/:account`)
 * answer on the public listener only with a read capability: an Ed25519 capability from the service's key set, for
 * this service (audience), exactly the path read (as its operation key), the tenant the path names, the scope
 * `read:<service>` and `READ_ARGUMENTS_HASH`, not expired and not used before. A caller without one reads through
 * the admin listener (loopback, admin token: `GET /admin/v1/...`), as an operator does. No route answers with a
 * tenant's data to a caller that holds no grant for that tenant.
 */
import { READ_ARGUMENTS_HASH, readCapabilityScope } from '../src/downstream/protocol';
import { verifyCapability } from '../src/capability/capability';
import type { CapabilityKeySet } from '../src/capability/capability-keys';

/** The path parameter a read route must have: the tenant whose record it reads. */
export const READ_TENANT_PARAM = 'tenant';

/** What a read request asks for. */
export interface ReadCapabilityRequest {
  readonly service: string;
  /** The request's path, without the query (`/v1/accounts/acme/acct_1`). */
  readonly path: string;
  readonly tenant: string;
}

/** Throws `CapabilityError` unless `token` grants exactly this read. */
export function verifyReadCapability(
  token: string | undefined,
  keys: CapabilityKeySet,
  req: ReadCapabilityRequest,
): void {
  verifyCapability(token, keys, {
    audience: req.service,
    key: req.path,
    argumentsHash: READ_ARGUMENTS_HASH,
    tenant: req.tenant,
    scope: readCapabilityScope(req.service),
    nowMs: Date.now(),
  });
}

/** Whether a route pattern names the tenant it reads (`/v1/stock/:tenant/:sku`). */
export function readsOneTenant(pattern: string): boolean {
  return pattern.split('/').includes(`:${READ_TENANT_PARAM}`);
}
