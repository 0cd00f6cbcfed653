/**
 * Minting identity tokens, and the local development issuer the demo and the tests use. A production issuer is
 * your identity provider; Ledgerloop only verifies. The development issuer's private key stays in the process that
 * created it (and a 0600 file in its data directory); workers get only the public key set.
 */
import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';

/**
 * A JSON Web Key as this module reads and writes it (the shape of jose's `JWK`, named here: jose ships ES modules
 * only, and a CommonJS consumer's `tsc` refuses a declaration that imports one).
 */
export interface JWK {
  readonly kty?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly d?: string;
  readonly kid?: string;
  readonly alg?: string;
  readonly use?: string;
  readonly [parameter: string]: unknown;
}
import type { IssuerConfig } from './config';
import { checkExactId, normalisePrincipalId } from '../domain/principal-id';
import {
  ACT_MAX_LIFETIME_SEC,
  CALL_CLAIM,
  isActPurpose,
  PURPOSE_CLAIM,
  RUN_CLAIM,
  scopeShapeError,
  SESSION_PURPOSE,
  type TokenPurpose,
  type TokenScope,
} from './purpose';

export interface IdentityClaims {
  readonly subject: string;
  /** With an issuer whose `mapping` is `claims`: the principal, tenant and roles the token asserts. */
  readonly principal?: string;
  readonly tenant?: string;
  readonly roles?: readonly string[];
  /**
   * What the token may do (src/identity/purpose.ts): an act (`start`, `approve`, `resolve`, `cancel`) on `run` (and
   * `call`), or `session` (default): who you are, for minting those, and nothing the workflow accepts.
   */
  readonly purpose?: TokenPurpose;
  readonly run?: string;
  readonly call?: string;
}

/** Claims that cannot be minted: a principal, tenant or subject out of normal form, an act without its run or call. */
export class IssueError extends Error {
  override readonly name = 'IssueError';
}

export interface IssueOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly kid: string;
  /** Ed25519 private key as a JWK. */
  readonly privateJwk: JWK;
  /** Default: an act's longest lifetime (src/identity/purpose.ts), 600 s for a session token. */
  readonly ttlSec?: number;
  /** Issued-at, seconds; default now. Tests set it in the past to mint expired tokens. */
  readonly iatSec?: number;
}

/** The body claims of a token, checked and in normal form; throws `IssueError`. */
function bodyClaims(claims: IdentityClaims): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  try {
    checkExactId('subject', claims.subject);
    if (claims.principal !== undefined) body['principal'] = normalisePrincipalId(claims.principal);
    if (claims.tenant !== undefined) body['tenant'] = checkExactId('tenant', claims.tenant);
  } catch (err) {
    throw new IssueError((err as Error).message);
  }
  if (claims.roles !== undefined) body['roles'] = [...claims.roles];
  const purpose = claims.purpose ?? SESSION_PURPOSE;
  body[PURPOSE_CLAIM] = purpose;
  if (purpose === SESSION_PURPOSE) {
    if (claims.run !== undefined || claims.call !== undefined)
      throw new IssueError('a session token names no run and no call');
    return body;
  }
  const shape = scopeShapeError({ purpose, run: claims.run, call: claims.call });
  if (shape !== undefined) throw new IssueError(shape);
  body[RUN_CLAIM] = claims.run;
  if (claims.call !== undefined) body[CALL_CLAIM] = claims.call;
  return body;
}

/**
 * Sign an identity token: compact JWS, EdDSA, with `iss`, `aud`, `sub`, `iat`, `exp`, `jti`, and `purpose` (with
 * `run` and `call` for an act). The principal is written in its normal form; claims that have none are refused.
 */
export async function issueIdentityToken(claims: IdentityClaims, opts: IssueOptions): Promise<string> {
  const body = bodyClaims(claims);
  const key = await importJWK({ ...opts.privateJwk, alg: 'EdDSA' }, 'EdDSA');
  const iat = opts.iatSec ?? Math.floor(Date.now() / 1000);
  const purpose = body[PURPOSE_CLAIM];
  const ttl = opts.ttlSec ?? (isActPurpose(purpose) ? ACT_MAX_LIFETIME_SEC[purpose] : 600);
  return new SignJWT(body)
    .setProtectedHeader({ alg: 'EdDSA', kid: opts.kid, typ: 'JWT' })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setSubject(claims.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttl)
    .setJti(`${iat}-${Math.random().toString(36).slice(2, 12)}`)
    .sign(key);
}

export const DEV_ISSUER = 'ledgerloop-dev-issuer';
export const DEV_AUDIENCE = 'ledgerloop';

/** A key pair for an issuer: the public JWK (with kid) and the private JWK. */
export async function newIssuerKey(kid: string): Promise<{ publicJwk: JWK; privateJwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid };
  const privateJwk = { ...(await exportJWK(privateKey)), kid };
  return { publicJwk, privateJwk };
}

/** How a development token differs from the default (a session token, 600 s, the principal as its subject). */
export interface DevIssueOverrides {
  readonly ttlSec?: number;
  readonly iatSec?: number;
  readonly audience?: string;
  /** The token's `sub`; default the principal id. */
  readonly subject?: string;
  /** An act and its run (and call): a token the workflow accepts for exactly that. Default: a session token. */
  readonly scope?: TokenScope;
}

export interface DevIssuer {
  /** The issuer file for workers (LEDGERLOOP_IDENTITY_ISSUERS): public keys only. */
  readonly configPath: string;
  /** The private key file (mode 0600): what `LEDGERLOOP_DEV_ISSUER_KEY` names for the CLI to mint act tokens. */
  readonly keyPath: string;
  readonly config: IssuerConfig;
  /**
   * A token for a principal of a tenant, with roles; the subject is the principal id. A session token unless
   * `over.scope` names the act, run and call it is for.
   */
  issue(principal: string, tenant: string, roles?: readonly string[], over?: DevIssueOverrides): Promise<string>;
  /** `issue` for one act: the token that starts, approves, resolves or cancels exactly `scope`. */
  issueFor(
    scope: TokenScope,
    principal: string,
    tenant: string,
    roles?: readonly string[],
    over?: Omit<DevIssueOverrides, 'scope'>,
  ): Promise<string>;
  readonly options: IssueOptions;
}

/**
 * The development issuer: a fresh Ed25519 key pair in `dir` (issuer.json for workers, issuer-key.json 0600 for
 * minting), mapping `claims` so the demo and the tests can mint any principal. Never for production.
 */
export async function createDevIssuer(dir: string): Promise<DevIssuer> {
  fs.mkdirSync(dir, { recursive: true });
  const kid = `dev-${Date.now().toString(36)}`;
  const { publicJwk, privateJwk } = await newIssuerKey(kid);
  const config: IssuerConfig = {
    issuer: DEV_ISSUER,
    audience: DEV_AUDIENCE,
    jwks: { keys: [publicJwk as IssuerConfig['jwks']['keys'][number]] },
    mapping: 'claims',
    subjects: {},
    maxLifetimeSec: 86_400,
  };
  const configPath = path.join(dir, 'issuer.json');
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2));
  const keyPath = path.join(dir, 'issuer-key.json');
  fs.writeFileSync(keyPath, JSON.stringify({ issuer: DEV_ISSUER, audience: DEV_AUDIENCE, privateJwk }), {
    mode: 0o600,
  });
  const options: IssueOptions = { issuer: DEV_ISSUER, audience: DEV_AUDIENCE, kid, privateJwk };
  const issue: DevIssuer['issue'] = (principal, tenant, roles = [], over = {}) =>
    issueIdentityToken(
      { subject: over.subject ?? principal, principal, tenant, roles, ...(over.scope ?? {}) },
      {
        ...options,
        ...(over.audience ? { audience: over.audience } : {}),
        ...(over.ttlSec !== undefined ? { ttlSec: over.ttlSec } : {}),
        ...(over.iatSec !== undefined ? { iatSec: over.iatSec } : {}),
      },
    );
  return {
    configPath,
    keyPath,
    config,
    options,
    issue,
    issueFor: (scope, principal, tenant, roles = [], over = {}) => issue(principal, tenant, roles, { ...over, scope }),
  };
}

/** Read the token a command carries: `--token` (a value, or `@file`), else LEDGERLOOP_ACTOR_TOKEN / the given variable. */
export function readToken(flag: string | undefined, env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const raw = flag ?? env[variable];
  if (raw === undefined || raw === '') return undefined;
  return (raw.startsWith('@') ? fs.readFileSync(raw.slice(1), 'utf8') : raw).trim();
}
