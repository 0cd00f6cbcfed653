/**
 * Minting identity tokens, and the local development issuer the demo and the tests use. A production issuer is
 * your identity provider; Ledgerloop only verifies. The development issuer's private key stays in the process that
 * created it (and a 0600 file in its data directory); workers get only the public key set.
 */
import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import type { IssuerConfig } from './config';

export interface IdentityClaims {
  readonly subject: string;
  /** With an issuer whose `mapping` is `claims`: the principal, tenant and roles the token asserts. */
  readonly principal?: string;
  readonly tenant?: string;
  readonly roles?: readonly string[];
}

export interface IssueOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly kid: string;
  /** Ed25519 private key as a JWK. */
  readonly privateJwk: JWK;
  /** Default 600 s. */
  readonly ttlSec?: number;
  /** Issued-at, seconds; default now. Tests set it in the past to mint expired tokens. */
  readonly iatSec?: number;
}

/** Sign an identity token: compact JWS, EdDSA, with `iss`, `aud`, `sub`, `iat`, `exp`, `jti`. */
export async function issueIdentityToken(claims: IdentityClaims, opts: IssueOptions): Promise<string> {
  const key = await importJWK({ ...opts.privateJwk, alg: 'EdDSA' }, 'EdDSA');
  const iat = opts.iatSec ?? Math.floor(Date.now() / 1000);
  const body: Record<string, unknown> = {};
  if (claims.principal !== undefined) body['principal'] = claims.principal;
  if (claims.tenant !== undefined) body['tenant'] = claims.tenant;
  if (claims.roles !== undefined) body['roles'] = [...claims.roles];
  return new SignJWT(body)
    .setProtectedHeader({ alg: 'EdDSA', kid: opts.kid, typ: 'JWT' })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setSubject(claims.subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (opts.ttlSec ?? 600))
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

export interface DevIssuer {
  /** The issuer file for workers (LEDGERLOOP_IDENTITY_ISSUERS): public keys only. */
  readonly configPath: string;
  readonly config: IssuerConfig;
  /** A token for a principal of a tenant, with roles; the subject is the principal id. */
  issue(
    principal: string,
    tenant: string,
    roles?: readonly string[],
    over?: { ttlSec?: number; iatSec?: number; audience?: string },
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
  fs.writeFileSync(
    path.join(dir, 'issuer-key.json'),
    JSON.stringify({ issuer: DEV_ISSUER, audience: DEV_AUDIENCE, privateJwk }),
    { mode: 0o600 },
  );
  const options: IssueOptions = { issuer: DEV_ISSUER, audience: DEV_AUDIENCE, kid, privateJwk };
  return {
    configPath,
    config,
    options,
    issue: (principal, tenant, roles = [], over = {}) =>
      issueIdentityToken(
        { subject: principal, principal, tenant, roles },
        {
          ...options,
          ...(over.audience ? { audience: over.audience } : {}),
          ...(over.ttlSec !== undefined ? { ttlSec: over.ttlSec } : {}),
          ...(over.iatSec !== undefined ? { iatSec: over.iatSec } : {}),
        },
      ),
  };
}

/** Read the token a command carries: `--token` (a value, or `@file`), else LEDGERLOOP_ACTOR_TOKEN / the given variable. */
export function readToken(flag: string | undefined, env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const raw = flag ?? env[variable];
  if (raw === undefined || raw === '') return undefined;
  return (raw.startsWith('@') ? fs.readFileSync(raw.slice(1), 'utf8') : raw).trim();
}
