/**
 * A token signed with an issuer's real key but minted by none of Ledgerloop's checks: what an issuer that does not
 * normalise principals, or one misconfigured, could sign. Tests and attacks use it to show the verifier refuses
 * what the issuer would never mint.
 */
import { importJWK, SignJWT } from 'jose';
import type { IssueOptions } from '../../src/identity/issue';

export async function signRawToken(
  opts: IssueOptions,
  claims: Record<string, unknown> & { readonly sub: string },
  life: { readonly iatSec?: number; readonly ttlSec?: number } = {},
): Promise<string> {
  const key = await importJWK({ ...opts.privateJwk, alg: 'EdDSA' }, 'EdDSA');
  const iat = life.iatSec ?? Math.floor(Date.now() / 1000);
  const { sub, ...rest } = claims;
  return new SignJWT(rest)
    .setProtectedHeader({ alg: 'EdDSA', kid: opts.kid, typ: 'JWT' })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (life.ttlSec ?? 120))
    .setJti(`raw-${iat}-${Math.random().toString(36).slice(2, 10)}`)
    .sign(key);
}
