/**
 * The one place a service verifies a lookup or seal capability (`GET /v1/operations/:key`,
 * `POST /v1/operations/:key/seal`): an Ed25519 capability from the service's key set, for this service
 * (audience), exactly this key and tenant, the scope `lookup:<service>` or `seal:<service>` and the constant
 * `LOOKUP_ARGUMENTS_HASH`, not expired and not used before.
 */
import { LOOKUP_ARGUMENTS_HASH, lookupCapabilityScope } from '../src/downstream/protocol';
import { verifyCapability } from '../src/capability/capability';
import type { CapabilityKeySet } from '../src/capability/capability-keys';

/** What a lookup or seal request asks for. */
export interface LookupCapabilityRequest {
  readonly service: string;
  readonly key: string;
  readonly tenant: string;
  readonly seal: boolean;
}

/** Throws `CapabilityError` unless `token` grants exactly this lookup (or seal) of `key` for `tenant`. */
export function verifyLookupCapability(
  token: string | undefined,
  keys: CapabilityKeySet,
  req: LookupCapabilityRequest,
): void {
  verifyCapability(token, keys, {
    audience: req.service,
    key: req.key,
    argumentsHash: LOOKUP_ARGUMENTS_HASH,
    tenant: req.tenant,
    scope: lookupCapabilityScope(req.service, req.seal),
    nowMs: Date.now(),
  });
}
