/**
 * Verify an identity token (compact JWS, EdDSA/Ed25519) against the configured issuers: signature by a key of
 * the issuer's set (by `kid`), exact `iss`, `aud`, `exp` and `iat` (30 s skew), a lifetime no longer than the
 * issuer and the token's purpose allow, the act it is presented for (purpose, run, call: src/identity/purpose.ts),
 * and a mapping of the subject to a principal and tenant, each in its normal form (src/domain/principal-id.ts).
 * Node side only (activities, CLI): `jose` uses WebCrypto.
 */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { Failure } from '../domain/failures';
import { IdentityConfigError, type IdentitySource, type IssuerConfig } from './config';
import { checkExactId, normalisePrincipalId, PrincipalIdError } from '../domain/principal-id';
import {
  ACT_MAX_LIFETIME_SEC,
  PURPOSE_CLAIM,
  scopeMismatch,
  scopeShapeError,
  SESSION_PURPOSE,
  type TokenScope,
} from './purpose';
import { isTokenShaped, type VerifiedIdentity } from '../domain/verified-identity';

/** Allowed clock difference between the issuer and the worker. */
export const CLOCK_SKEW_SEC = 30;

export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  constructor(
    readonly type: (typeof Failure)['IdentityInvalid' | 'IdentityUnmapped' | 'IdentityUnconfigured'],
    message: string,
  ) {
    super(message);
  }
}

export const tokenDigest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Why jose refused, in a sentence that names no secret. */
function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed)
    return `the token's ${err.claim} claim is not accepted (${err.reason})`;
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key of the issuer matches the token (unknown kid)';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'the token names no single key of the issuer';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token is not signed with EdDSA';
  if (err instanceof errors.JOSEError) return `the token is malformed (${err.code})`;
  return 'the token could not be verified';
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 100) && v.length <= 50
    ? (v as string[])
    : undefined;
}

function mapSubject(
  issuer: IssuerConfig,
  payload: JWTPayload,
): { principalId: string; tenant: string; roles: string[] } {
  const sub = payload.sub as string;
  if (issuer.mapping === 'subjects') {
    const m = Object.prototype.hasOwnProperty.call(issuer.subjects, sub) ? issuer.subjects[sub] : undefined;
    if (!m)
      throw new IdentityError(
        Failure.IdentityUnmapped,
        `subject ${sub.slice(0, 100)} of ${issuer.issuer} maps to no principal`,
      );
    return named(sub, m.principal, m.tenant, [...m.roles]);
  }
  const { principal, tenant } = payload as { principal?: unknown; tenant?: unknown };
  const roles = payload['roles'] === undefined ? [] : strings(payload['roles']);
  if (
    typeof principal !== 'string' ||
    principal === '' ||
    principal.length > 200 ||
    typeof tenant !== 'string' ||
    tenant === '' ||
    tenant.length > 200 ||
    roles === undefined
  ) {
    throw new IdentityError(
      Failure.IdentityUnmapped,
      `the token of subject ${sub.slice(0, 100)} carries no valid principal, tenant and roles claims`,
    );
  }
  return named(sub, principal, tenant, roles);
}

/** The principal in its normal form and the tenant as it must be spelled, or `Identity.Unmapped`. */
function named(sub: string, principal: string, tenant: string, roles: string[]) {
  try {
    return { principalId: normalisePrincipalId(principal), tenant: checkExactId('tenant', tenant), roles };
  } catch (err) {
    if (!(err instanceof PrincipalIdError)) throw err;
    throw new IdentityError(Failure.IdentityUnmapped, `the token of subject ${sub.slice(0, 100)}: ${err.message}`);
  }
}

/**
 * Who `token` names, if it verifies and grants exactly `expected` (the act, the run, and for an approval or a
 * resolution the call). Throws `IdentityError` otherwise; never returns for a token that names another act.
 */
export async function verifyIdentityToken(
  source: IdentitySource,
  token: unknown,
  expected: TokenScope,
  nowMs: number = Date.now(),
): Promise<VerifiedIdentity> {
  const shape = scopeShapeError(expected);
  if (shape !== undefined)
    throw new IdentityError(Failure.IdentityInvalid, `nothing to verify the token for: ${shape}`);
  return verifiedFor(source, token, nowMs, (payload) => {
    const mismatch = scopeMismatch(payload, expected);
    if (mismatch !== undefined) throw new IdentityError(Failure.IdentityInvalid, mismatch);
    // An act's token is short-lived whatever the issuer allows: valid no longer, and presented no later, than that.
    const cap = ACT_MAX_LIFETIME_SEC[expected.purpose];
    const [iat, exp] = [payload.iat as number, payload.exp as number];
    if (exp - iat > cap || nowMs / 1000 - iat > cap + CLOCK_SKEW_SEC)
      throw new IdentityError(
        Failure.IdentityInvalid,
        `a token to ${expected.purpose} lives at most ${cap} s (this one: ${exp - iat} s, issued ${Math.max(0, Math.round(nowMs / 1000 - iat))} s ago)`,
      );
  });
}

/**
 * Who a session token names (`purpose: session`: a sign-in, e.g. the operator console's), if it verifies. It is
 * accepted for no act: a person acts with an act token minted for it (src/identity/act-token.ts).
 */
export function verifySessionToken(
  source: IdentitySource,
  token: unknown,
  nowMs: number = Date.now(),
): Promise<VerifiedIdentity> {
  return verifiedFor(source, token, nowMs, (payload) => {
    const purpose = payload[PURPOSE_CLAIM];
    if (purpose !== SESSION_PURPOSE)
      throw new IdentityError(
        Failure.IdentityInvalid,
        `a sign-in needs a session token; this one is for ${typeof purpose === 'string' ? purpose.slice(0, 40) : 'nothing named'}`,
      );
  });
}

/** The checks every token passes, then `check` (what it is for), then its subject's mapping. */
/** The trusted issuer `token` names, refusing an unreadable issuer list, a token not shaped as a JWS or a stranger. */
function trustedIssuerOf(source: IdentitySource, token: unknown): { token: string; issuer: IssuerConfig } {
  let issuers;
  try {
    issuers = source.current();
  } catch (err) {
    throw new IdentityError(
      Failure.IdentityUnconfigured,
      err instanceof IdentityConfigError ? err.message : 'identity issuers unavailable',
    );
  }
  if (!isTokenShaped(token))
    throw new IdentityError(Failure.IdentityInvalid, 'no identity token, or not a compact JWS');
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    throw new IdentityError(Failure.IdentityInvalid, 'the token is malformed');
  }
  const issuer = issuers.find((i) => i.issuer === iss);
  if (!issuer) throw new IdentityError(Failure.IdentityInvalid, `the token's issuer is not one this worker trusts`);
  return { token, issuer };
}

async function verifiedFor(
  source: IdentitySource,
  presented: unknown,
  nowMs: number,
  check: (payload: JWTPayload) => void,
): Promise<VerifiedIdentity> {
  const { token, issuer } = trustedIssuerOf(source, presented);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, createLocalJWKSet(issuer.jwks), {
      issuer: issuer.issuer,
      audience: issuer.audience,
      algorithms: ['EdDSA'],
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: CLOCK_SKEW_SEC,
      currentDate: new Date(nowMs),
      maxTokenAge: issuer.maxLifetimeSec + CLOCK_SKEW_SEC,
    }));
  } catch (err) {
    throw new IdentityError(Failure.IdentityInvalid, reasonOf(err));
  }
  const exp = payload.exp as number;
  const iat = payload.iat as number;
  if (exp - iat > issuer.maxLifetimeSec)
    throw new IdentityError(Failure.IdentityInvalid, `the token is valid longer than ${issuer.maxLifetimeSec} s`);
  check(payload);
  if (typeof payload.sub !== 'string' || payload.sub.length > 200)
    throw new IdentityError(Failure.IdentityInvalid, 'the token has no valid subject');
  try {
    checkExactId('subject', payload.sub);
  } catch (err) {
    if (!(err instanceof PrincipalIdError)) throw err;
    throw new IdentityError(Failure.IdentityInvalid, err.message);
  }
  const mapped = mapSubject(issuer, payload);
  return {
    subject: payload.sub,
    issuer: issuer.issuer,
    ...mapped,
    tokenDigest: tokenDigest(token),
    expiresAt: new Date(exp * 1000).toISOString(),
  };
}
