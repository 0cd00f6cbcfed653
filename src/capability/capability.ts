/**
 * Capabilities: a narrow, short-lived, signed permission for exactly one request to one service. The dispatch
 * activity signs one per attempt, after re-deriving the call from the request body and re-evaluating the policy
 * (`signAtDispatch`); the downstream verifies it and refuses anything else. Nobody dispatches with broad,
 * ambient credentials on the model's behalf.
 *
 * Format: a compact JWS (RFC 7515) with header `{"alg":"EdDSA","typ":"ledgerloop-cap+jwt","kid":...}` over JWT
 * claims (RFC 7519): `iss`, `sub` (the principal), `aud` (the service), `iat`, `exp`, `jti`, and the call:
 * operation key, arguments hash, tenant, scope, action, resource, policy version (and amount when it moves money).
 * Signing keys are Ed25519 and stay with the signers; services hold public keys by `kid` (capability-keys.ts).
 * A token never enters workflow history: the dispatch response records its digest, kid and jti.
 */
import { createHash, randomUUID, sign as edSign, verify as edVerify } from 'node:crypto';
import type { CapabilityKeySet, CapabilitySigningKey } from './capability-keys';

export const CAPABILITY_HEADER = 'x-capability';
export const CAPABILITY_TYP = 'ledgerloop-cap+jwt';

/** Issuers: who signed (the key's holder). */
export const DISPATCH_ISSUER = 'ledgerloop:dispatch';
export const RELAY_ISSUER = 'ledgerloop:outbox-relay';

/** How long a capability signed for one attempt lives, at most (the decision's own expiry may be sooner). */
export const CAPABILITY_TTL_MS = 60_000;
/** A verifier refuses a token whose lifetime (`exp - iat`) is longer than this, whatever the signer said. */
export const MAX_CAPABILITY_LIFETIME_MS = 10 * 60_000;

/**
 * The call a capability is for, as the workflow's decision names it (history data: the shape recorded in
 * `DispatchAuthorization.claims`). The signer re-derives every field before it signs.
 */
export interface CapabilityClaims {
  readonly v: 1;
  readonly operationKey: string;
  /**
   * `exact`: only `operationKey` itself. `derived`: also `<operationKey>~…`, issued only under a strategy that
   * declares it; the runtime's two do not (only the lab installs one that does).
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

/** What a signed capability says (the JWT claims). */
export interface CapabilityTokenClaims {
  readonly v: 2;
  readonly iss: string;
  /** The principal the call is made for. */
  readonly sub: string;
  /** The one service that may accept it. */
  readonly aud: string;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
  readonly operationKey: string;
  readonly keyMode: 'exact' | 'derived';
  readonly argumentsHash: string;
  readonly tenant: string;
  readonly scope: string;
  readonly action: string;
  readonly resource: string;
  readonly policyVersion: string;
  readonly amountMinor?: number;
  readonly currency?: string;
}

import type { CapabilityRecord } from '../domain/capability-record';

export type { CapabilityRecord };

export class CapabilityError extends Error {
  override readonly name = 'Capability.Invalid';
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

export function capabilityDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A decision or capability closer than this to its expiry is not sent: the downstream could see it expired. */
export { lapsesBeforeSend, SEND_MARGIN_MS } from '../policy/send-margin';

export interface SignOptions {
  /** The service name that may accept the token (`aud`). */
  readonly audience: string;
  readonly nowMs: number;
  readonly issuer?: string;
  /** Upper bound on the token's life; default CAPABILITY_TTL_MS. */
  readonly ttlMs?: number;
  readonly amountMinor?: number;
  readonly currency?: string;
}

/**
 * Sign a capability for one request. `exp` is the grant's `expiresAt` or `nowMs + ttlMs`, whichever is sooner;
 * `jti` is fresh. Returns the token (to send, never to record) and what may be recorded about it.
 */
export function signCapability(
  grant: Omit<CapabilityClaims, 'v'>,
  key: CapabilitySigningKey,
  opts: SignOptions,
): { readonly token: string; readonly claims: CapabilityTokenClaims; readonly record: CapabilityRecord } {
  const grantExpiry = Date.parse(grant.expiresAt);
  if (!Number.isFinite(grantExpiry)) throw new CapabilityError('the grant has no valid expiry');
  const expMs = Math.min(grantExpiry, opts.nowMs + (opts.ttlMs ?? CAPABILITY_TTL_MS));
  const iat = Math.floor(opts.nowMs / 1000);
  const exp = Math.floor(expMs / 1000);
  if (exp <= iat) throw new CapabilityError('the grant expires before a capability could be used');
  const claims: CapabilityTokenClaims = {
    v: 2,
    iss: opts.issuer ?? DISPATCH_ISSUER,
    sub: grant.principalId,
    aud: opts.audience,
    iat,
    exp,
    jti: randomUUID(),
    operationKey: grant.operationKey,
    keyMode: grant.keyMode,
    argumentsHash: grant.argumentsHash,
    tenant: grant.tenant,
    scope: grant.scope,
    action: grant.action,
    resource: grant.resource,
    policyVersion: grant.policyVersion,
    ...(opts.amountMinor !== undefined ? { amountMinor: opts.amountMinor } : {}),
    ...(opts.currency !== undefined ? { currency: opts.currency } : {}),
  };
  const input = `${b64(JSON.stringify({ alg: 'EdDSA', typ: CAPABILITY_TYP, kid: key.kid }))}.${b64(JSON.stringify(claims))}`;
  const token = `${input}.${edSign(null, Buffer.from(input, 'ascii'), key.privateKey).toString('base64url')}`;
  return {
    token,
    claims,
    record: { capabilityDigest: capabilityDigest(token), kid: key.kid, jti: claims.jti, aud: claims.aud, exp },
  };
}

/** The request a capability must match. */
export interface CapabilityRequest {
  /** The idempotency key sent. */
  readonly key: string;
  readonly argumentsHash: string;
  readonly tenant: string;
  /** The effect the route protects, e.g. `wallet.charge` (or `lookup:wallet.charge` for a lookup). */
  readonly scope: string;
  /** This service's name: a token for another service is refused. */
  readonly audience: string;
  readonly nowMs: number;
  /** Clock skew allowed on `iat` and `exp`; default the key set's (30 s). */
  readonly skewMs?: number;
}

function decodeJson(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new CapabilityError(`malformed capability ${what}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CapabilityError(`malformed capability ${what}`);
  return value as Record<string, unknown>;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Verify a token against the request it came with, then record its `jti` as used: returns the claims or throws
 * CapabilityError. Refuses: a malformed token, any algorithm but EdDSA (an HMAC token too), an unknown `kid`, a
 * bad signature, a key not allowed the scope, another audience, `iat` in the future or `exp` in the past beyond
 * the skew, a lifetime over 10 minutes, another key, arguments, tenant or scope, and a `jti` already used.
 */
export function verifyCapability(
  token: string | undefined,
  keySet: CapabilityKeySet,
  req: CapabilityRequest,
): CapabilityTokenClaims {
  if (!token) throw new CapabilityError('a capability is required');
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p)))
    throw new CapabilityError('malformed capability (not a compact JWS)');
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h, 'header');
  if (header.alg !== 'EdDSA')
    throw new CapabilityError(`capability algorithm ${JSON.stringify(header.alg ?? null)} is refused: EdDSA only`);
  if (header.typ !== CAPABILITY_TYP) throw new CapabilityError('not a capability token (typ)');
  if (
    header.crit !== undefined ||
    header.jwk !== undefined ||
    header.jku !== undefined ||
    header.x5u !== undefined ||
    header.x5c !== undefined
  ) {
    throw new CapabilityError('capability header names keys or extensions: refused');
  }
  if (typeof header.kid !== 'string') throw new CapabilityError('capability has no kid');
  const trusted = keySet.get(header.kid);
  if (trusted === undefined) throw new CapabilityError(`capability key ${header.kid.slice(0, 64)} is not trusted here`);
  const sig = Buffer.from(s, 'base64url');
  if (sig.length !== 64 || !edVerify(null, Buffer.from(`${h}.${p}`, 'ascii'), trusted.key, sig))
    throw new CapabilityError('bad capability signature');
  const c = decodeJson(p, 'claims') as unknown as CapabilityTokenClaims;
  if (c.v !== 2) throw new CapabilityError('unknown capability version');
  if (
    typeof c.iat !== 'number' ||
    typeof c.exp !== 'number' ||
    typeof c.jti !== 'string' ||
    c.jti.length < 8 ||
    c.jti.length > 128
  ) {
    throw new CapabilityError('capability lacks iat, exp or jti');
  }
  if (trusted.scopes !== undefined && !trusted.scopes.includes(c.scope)) {
    throw new CapabilityError(`key ${header.kid} may not sign scope ${String(c.scope)}`);
  }
  if (c.aud !== req.audience) throw new CapabilityError(`capability is for ${String(c.aud)}, not ${req.audience}`);
  const skew = req.skewMs ?? keySet.skewMs;
  const iatMs = c.iat * 1000;
  const expMs = c.exp * 1000;
  if (iatMs > req.nowMs + skew) throw new CapabilityError('capability issued in the future');
  if (expMs + skew <= req.nowMs) throw new CapabilityError(`capability expired at ${new Date(expMs).toISOString()}`);
  if (expMs - iatMs > MAX_CAPABILITY_LIFETIME_MS) throw new CapabilityError('capability lives longer than allowed');
  const keyOk = req.key === c.operationKey || (c.keyMode === 'derived' && req.key.startsWith(`${c.operationKey}~`));
  if (!keyOk) throw new CapabilityError('capability is for another operation key');
  if (c.argumentsHash !== req.argumentsHash) throw new CapabilityError('capability is for other arguments');
  if (c.tenant !== req.tenant) throw new CapabilityError('capability is for another tenant');
  if (c.scope !== req.scope) throw new CapabilityError(`capability is for scope ${String(c.scope)}, not ${req.scope}`);
  // Last, so a refused token is not spent: accepted once, kept until it could no longer pass the expiry check.
  if (!keySet.replay.consume(`${header.kid}/${c.jti}`, expMs + skew, req.nowMs))
    throw new CapabilityError('capability already used (jti replay)');
  return c;
}

/** The claims of a token WITHOUT verifying it (for the sender's own expiry check); undefined if unreadable. */
export function peekCapabilityClaims(token: string): Partial<CapabilityTokenClaims> | undefined {
  try {
    return decodeJson(token.split('.')[1] ?? '', 'claims') as Partial<CapabilityTokenClaims>;
  } catch {
    return undefined;
  }
}
