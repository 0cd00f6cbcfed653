/**
 * Capabilities: a narrow, expiring, signed permission for exactly one call. The authorizer issues one for an
 * allowed decision; the dispatch activity carries it; the downstream verifies it and refuses anything else.
 * Nobody dispatches with broad, ambient credentials on the model's behalf.
 *
 * Format: base64url(JSON claims) "." base64url(HMAC-SHA256(key, that first part)). The signing key never
 * leaves the authorizer and the services (LEDGERLOOP_CAPABILITY_KEY); only the signed token travels.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const CAPABILITY_HEADER = 'x-capability';

export interface CapabilityClaims {
  readonly v: 1;
  readonly operationKey: string;
  /**
   * `exact`: only `operationKey` itself. `derived`: also `<operationKey>~…`, issued only to runs that chose the
   * naive blind-retry strategy, whose fresh keys per attempt are the failure it demonstrates.
   */
  readonly keyMode: 'exact' | 'derived';
  readonly argumentsHash: string;
  readonly tenant: string;
  readonly principalId: string;
  readonly scope: string;
  readonly action: string;
  readonly resource: string;
  readonly policyVersion: string;
  readonly expiresAt: string;
}

export class CapabilityError extends Error {
  override readonly name = 'Capability.Invalid';
}

const b64 = (buf: Buffer | string): string => Buffer.from(buf).toString('base64url');

export function capabilityKeyFromEnv(env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  const raw = env.LEDGERLOOP_CAPABILITY_KEY;
  if (!raw) return undefined;
  const key = Buffer.from(raw, 'base64');
  if (key.length < 32) throw new Error('LEDGERLOOP_CAPABILITY_KEY must be at least 32 bytes, base64');
  return key;
}

/** A decision or capability closer than this to its expiry is not sent: the downstream could see it expired. */
export { lapsesBeforeSend, SEND_MARGIN_MS } from './send-margin';

export function signCapability(claims: CapabilityClaims, key: Buffer): string {
  const body = b64(JSON.stringify(claims));
  return `${body}.${b64(createHmac('sha256', key).update(body).digest())}`;
}

export interface CapabilityRequest {
  readonly key: string;
  readonly argumentsHash: string;
  readonly tenant: string;
  readonly scope: string;
  readonly nowMs: number;
}

/** Verify a token against the request it came with; returns the claims or throws CapabilityError. */
export function verifyCapability(token: string | undefined, key: Buffer, req: CapabilityRequest): CapabilityClaims {
  if (!token) throw new CapabilityError('a capability is required');
  const [body, sig] = token.split('.');
  if (!body || !sig) throw new CapabilityError('malformed capability');
  const expected = createHmac('sha256', key).update(body).digest();
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new CapabilityError('bad capability signature');
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CapabilityClaims;
  if (claims.v !== 1) throw new CapabilityError('unknown capability version');
  if (Date.parse(claims.expiresAt) <= req.nowMs) throw new CapabilityError(`capability expired at ${claims.expiresAt}`);
  const keyOk = req.key === claims.operationKey || (claims.keyMode === 'derived' && req.key.startsWith(`${claims.operationKey}~`));
  if (!keyOk) throw new CapabilityError('capability is for another operation key');
  if (claims.argumentsHash !== req.argumentsHash) throw new CapabilityError('capability is for other arguments');
  if (claims.tenant !== req.tenant) throw new CapabilityError('capability is for another tenant');
  if (claims.scope !== req.scope) throw new CapabilityError(`capability is for scope ${claims.scope}, not ${req.scope}`);
  return claims;
}
