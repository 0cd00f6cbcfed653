/**
 * The one place a service verifies a lookup or seal capability (`GET /v1/operations/:key`,
 * `POST /v1/operations/:key/seal`). It calls today's `verifyCapability` with the scope `lookup:<service>` or
 * `seal:<service>` and the constant `LOOKUP_ARGUMENTS_HASH`; when capabilities move to a key set, only this
 * function changes.
 */
import { LOOKUP_ARGUMENTS_HASH, lookupCapabilityScope } from '../downstream/protocol';
import { verifyCapability } from '../policy/capability';

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
  verificationKey: Buffer,
  req: LookupCapabilityRequest,
): void {
  verifyCapability(token, verificationKey, {
    key: req.key,
    argumentsHash: LOOKUP_ARGUMENTS_HASH,
    tenant: req.tenant,
    scope: lookupCapabilityScope(req.service, req.seal),
    nowMs: Date.now(),
  });
}
