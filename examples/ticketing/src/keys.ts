/**
 * The project's keys, for development: the worker's capability signing key (Ed25519; the ticketing service gets
 * only its public half, jwks.json) and an identity issuer that mints a token for alice, who starts the runs.
 *
 *   npm run keys      # writes .data/keys/: dispatch-key.json (secret), jwks.json, issuer.json, issuer-key.json (secret)
 *
 * In production the signing key comes from your secret store and tokens from your identity provider.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  createDevIssuer,
  generateSigningKey,
  issueIdentityToken,
  jwksJson,
  parseIdentityConfig,
  parseSigningKey,
  publicJwkOf,
  serializeSigningKey,
  type CapabilitySigningKey,
  type IdentityConfig,
  type IssueOptions,
} from 'ledgerloop';
import { KEYS_DIR } from './project';

/** The act a token is for: the run it starts (Ledgerloop's token purposes). */
export interface ActScope {
  readonly purpose: 'start';
  readonly run: string;
}

export interface ProjectKeys {
  readonly capabilityKey: CapabilitySigningKey;
  /** The services' key set (public keys only), as JSON. */
  readonly jwks: string;
  readonly issuers: IdentityConfig;
  /**
   * A token naming `principal` of `tenant` (the issuer maps claims: development only), for one act: to start run
   * `scope.run` (each start needs its own token).
   */
  issue(principal: string, tenant: string, roles: readonly string[], scope: ActScope): Promise<string>;
}

/** Generates fresh keys into `dir` and returns them. */
export async function createProjectKeys(dir = KEYS_DIR): Promise<ProjectKeys> {
  mkdirSync(dir, { recursive: true });
  const capabilityKey = generateSigningKey();
  const jwks = jwksJson([publicJwkOf(capabilityKey)]);
  writeFileSync(path.join(dir, 'dispatch-key.json'), serializeSigningKey(capabilityKey), { mode: 0o600 });
  writeFileSync(path.join(dir, 'jwks.json'), jwks);
  const issuer = await createDevIssuer(dir);
  return {
    capabilityKey,
    jwks,
    issuers: [issuer.config],
    issue: (principal, tenant, roles, scope) =>
      issueIdentityToken({ subject: principal, principal, tenant, roles, ...scope }, issuer.options),
  };
}

/** Reads the keys `npm run keys` wrote, or says to run it. */
export function readProjectKeys(dir = KEYS_DIR): ProjectKeys {
  const read = (name: string): string => {
    try {
      return readFileSync(path.join(dir, name), 'utf8');
    } catch {
      throw new Error(`${path.join(dir, name)} is missing: run \`npm run keys\` first`);
    }
  };
  const minting = JSON.parse(read('issuer-key.json')) as Omit<IssueOptions, 'kid'>;
  const options: IssueOptions = { ...minting, kid: String(minting.privateJwk.kid) };
  return {
    capabilityKey: parseSigningKey(read('dispatch-key.json')),
    jwks: read('jwks.json'),
    issuers: parseIdentityConfig(JSON.parse(read('issuer.json'))),
    issue: (principal, tenant, roles, scope) =>
      issueIdentityToken({ subject: principal, principal, tenant, roles, ...scope }, options),
  };
}

if (require.main === module) {
  createProjectKeys().then(
    () => console.log(`keys written to ${KEYS_DIR} (dispatch-key.json and issuer-key.json are secrets)`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
}
