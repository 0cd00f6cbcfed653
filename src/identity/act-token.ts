/**
 * The token a client sends for one act (start, approve, resolve, cancel: src/identity/purpose.ts). The token it is
 * given is used as it is when it names exactly that act, run and call. Otherwise, with the development issuer's
 * key (`LEDGERLOOP_DEV_ISSUER_KEY`, the 0600 `issuer-key.json` of `npm start` or `npm run cluster`), a session
 * token of that issuer is exchanged for an act token: the session token is verified first, and the act token
 * carries its subject, principal, tenant and roles, for this act only, for the act's short lifetime. Without
 * that key nothing is minted: a production issuer mints act tokens itself (the way a token exchange would).
 *
 * Node side (CLI and client helpers).
 */
import fs from 'node:fs';
import { decodeJwt, importJWK, jwtVerify, type JWK } from 'jose';
import { configValue } from '../config';
import { DEV_AUDIENCE, issueIdentityToken } from './issue';
import { scopeMismatch, SESSION_PURPOSE, type TokenScope } from './purpose';

export const DEV_ISSUER_KEY_ENV = 'LEDGERLOOP_DEV_ISSUER_KEY';

/** The given token cannot be used for the act, and none could be minted; the message says what would do. */
export class ActTokenError extends Error {
  override readonly name = 'ActTokenError';
}

/** The claims of a token as written, unverified (undefined when it is not a JWT). */
function peek(token: string): Record<string, unknown> | undefined {
  try {
    return decodeJwt(token) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

interface DevIssuerKeyFile {
  readonly issuer: string;
  readonly audience: string;
  readonly privateJwk: JWK & { readonly kid: string; readonly x: string };
}

function readKeyFile(file: string): DevIssuerKeyFile {
  let parsed: Partial<DevIssuerKeyFile>;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DevIssuerKeyFile>;
  } catch (err) {
    throw new ActTokenError(`${DEV_ISSUER_KEY_ENV}: cannot read ${file}: ${(err as Error).message}`);
  }
  const jwk = parsed.privateJwk;
  if (
    typeof parsed.issuer !== 'string' ||
    (parsed.audience !== undefined && typeof parsed.audience !== 'string') ||
    typeof jwk?.kid !== 'string' ||
    typeof jwk.x !== 'string' ||
    typeof jwk.d !== 'string'
  )
    throw new ActTokenError(`${DEV_ISSUER_KEY_ENV}: ${file} is not a development issuer key file`);
  // A key file without an audience (the compose trial's) is for the development audience.
  return { ...(parsed as DevIssuerKeyFile), audience: parsed.audience ?? DEV_AUDIENCE };
}

/** A session token of the development issuer, verified, traded for a token for exactly `scope`. */
async function exchange(session: string, scope: TokenScope, file: string): Promise<string> {
  const key = readKeyFile(file);
  const { d: _private, ...publicJwk } = key.privateJwk;
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(session, await importJWK({ ...publicJwk, alg: 'EdDSA' }, 'EdDSA'), {
      issuer: key.issuer,
      audience: key.audience,
      algorithms: ['EdDSA'],
      requiredClaims: ['sub', 'exp', 'iat'],
    }));
  } catch (err) {
    throw new ActTokenError(
      `the token is not a valid session token of the development issuer in ${file}: ${(err as Error).message}`,
    );
  }
  if (claims['purpose'] !== SESSION_PURPOSE)
    throw new ActTokenError(
      `only a session token is exchanged for an act token; this one is for ${String(claims['purpose']).slice(0, 40)}`,
    );
  const roles = Array.isArray(claims['roles']) ? (claims['roles'] as string[]) : [];
  return issueIdentityToken(
    {
      subject: claims['sub'] as string,
      ...(typeof claims['principal'] === 'string' ? { principal: claims['principal'] } : {}),
      ...(typeof claims['tenant'] === 'string' ? { tenant: claims['tenant'] } : {}),
      roles,
      ...scope,
    },
    { issuer: key.issuer, audience: key.audience, kid: key.privateJwk.kid, privateJwk: key.privateJwk },
  );
}

/**
 * The token to send for `scope`: `presented` itself when it names exactly that act (the run verifies it anyway),
 * else one minted from it with the development issuer's key when `LEDGERLOOP_DEV_ISSUER_KEY` names one. Throws
 * `ActTokenError` otherwise, before anything is sent.
 */
export async function tokenForAct(
  presented: string,
  scope: TokenScope,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ readonly token: string; readonly minted: boolean }> {
  const claims = peek(presented);
  if (claims === undefined) throw new ActTokenError('the token is not a JWT (a compact JWS)');
  const mismatch = scopeMismatch(claims, scope);
  if (mismatch === undefined) return { token: presented, minted: false };
  const file = configValue('LEDGERLOOP_DEV_ISSUER_KEY', env);
  if (file === undefined)
    throw new ActTokenError(
      `${mismatch}. Ask your identity provider for a token to ${scope.purpose} exactly that; with the development issuer, set ${DEV_ISSUER_KEY_ENV} to its issuer-key.json and pass your session token`,
    );
  return { token: await exchange(presented, scope, file), minted: true };
}
