/**
 * The compose deployment's secret files, written the one way: mode 0600, in place (compose mounts a secret file by
 * its inode, so a rewritten token must keep it), and, when written as root, owned by the user the containers run
 * as (LEDGERLOOP_CONTAINER_UID:GID, default 1000:1000), who alone can then read it. Nothing here goes to `.env` or
 * to an environment variable: scripts/gen-compose-secrets.ts prints only public values.
 *
 *   <dir>/codec-keys                          payload keys (`k1:<base64 32 bytes>`)
 *   <dir>/secrets/capability-signing-key.json the workers' Ed25519 capability key (a private JWK)
 *   <dir>/secrets/relay-signing-key.json      the outbox relay's key
 *   <dir>/secrets/identity-issuer-key.json    a development identity issuer's private key (a trial without an IdP)
 *   <dir>/identity-issuers.json               that issuer's public key set (what the frontend and workers trust)
 *   <dir>/secrets/<name>.jwt                  tokens of that issuer: worker, admin, alice, carol, bob
 */
import fs from 'node:fs';
import path from 'node:path';
import { generateCodecKeys } from '../src/codec/data-converter';
import type { IssuerConfig } from '../src/identity/config';
import { DEV_AUDIENCE, issueIdentityToken, newIssuerKey } from '../src/identity/issue';
import { generateCapabilityTrust, serializeSigningKey } from '../src/capability/capability-keys';

export const CONTAINER_UID_ENV = 'LEDGERLOOP_CONTAINER_UID';
export const CONTAINER_GID_ENV = 'LEDGERLOOP_CONTAINER_GID';

function idOf(raw: string | undefined, fallback: number): number {
  const n = Number(raw ?? fallback);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`a user or group id must be a whole number, not ${raw}`);
  return n;
}

/** Writes `text` to `file` with mode 0600, keeping the file's inode when it exists; returns `file`. */
export function writeSecretFile(file: string, text: string, env: NodeJS.ProcessEnv = process.env): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = fs.openSync(file, 'w', 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    fs.chownSync(file, idOf(env[CONTAINER_UID_ENV], 1000), idOf(env[CONTAINER_GID_ENV], 1000));
  }
  return file;
}

/** Writes the capability signing keys (private, 0600); returns the services' public key set (JSON). */
export function writeCapabilityKeys(secretsDir: string): { readonly publicJwks: string; readonly files: string[] } {
  const trust = generateCapabilityTrust();
  const files = [
    writeSecretFile(path.join(secretsDir, 'capability-signing-key.json'), serializeSigningKey(trust.dispatch)),
    writeSecretFile(path.join(secretsDir, 'relay-signing-key.json'), serializeSigningKey(trust.relay)),
  ];
  return { publicJwks: JSON.stringify(trust.jwks), files };
}

/** Writes payload keys unless the file holds some already. */
export function ensureCodecKeysFile(file: string): string {
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== '') {
    fs.chmodSync(file, 0o600);
    return file;
  }
  return writeSecretFile(file, `${generateCodecKeys('k1').keys}\n`);
}

/** Who gets a token of the trial issuer, with which tenant and roles. */
export const TRIAL_TOKENS: readonly { file: string; principal: string; tenant: string; roles: string[] }[] = [
  { file: 'worker.jwt', principal: 'worker:compose', tenant: 'system', roles: ['worker:ledgerloop'] },
  { file: 'admin.jwt', principal: 'ops:admin', tenant: 'system', roles: ['admin'] },
  { file: 'alice.jwt', principal: 'user:alice', tenant: 'acme', roles: ['starter'] },
  { file: 'carol.jwt', principal: 'manager:carol', tenant: 'acme', roles: ['approver'] },
  { file: 'bob.jwt', principal: 'ops:bob', tenant: 'acme', roles: ['operator'] },
];

/**
 * A development identity issuer for a compose trial: its key is made once (0600) and kept; its public key set is
 * written as `identity-issuers.json`; its tokens (valid `ttlSec`, at most the issuer's 24 h) are minted again on
 * every call, in place, so running this again before they expire refreshes the running deployment's tokens.
 */
export async function writeTrialIdentity(dir: string, ttlSec = 24 * 3600): Promise<string[]> {
  const keyFile = path.join(dir, 'secrets', 'identity-issuer-key.json');
  const issuer = 'ledgerloop-compose-trial';
  let privateJwk: Record<string, unknown>;
  let publicJwk: Record<string, unknown>;
  if (fs.existsSync(keyFile)) {
    ({ privateJwk, publicJwk } = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as {
      privateJwk: Record<string, unknown>;
      publicJwk: Record<string, unknown>;
    });
  } else {
    ({ privateJwk, publicJwk } = (await newIssuerKey(`trial-${Date.now().toString(36)}`)) as unknown as {
      privateJwk: Record<string, unknown>;
      publicJwk: Record<string, unknown>;
    });
    writeSecretFile(keyFile, JSON.stringify({ issuer, privateJwk, publicJwk }));
  }
  const config: IssuerConfig = {
    issuer,
    audience: DEV_AUDIENCE,
    jwks: { keys: [publicJwk as IssuerConfig['jwks']['keys'][number]] },
    mapping: 'claims',
    subjects: {},
    maxLifetimeSec: 86_400,
  };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'identity-issuers.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o644 });
  const written = [keyFile, path.join(dir, 'identity-issuers.json')];
  for (const t of TRIAL_TOKENS) {
    const token = await issueIdentityToken(
      { subject: t.principal, principal: t.principal, tenant: t.tenant, roles: t.roles },
      { issuer, audience: DEV_AUDIENCE, kid: String(privateJwk['kid']), privateJwk, ttlSec },
    );
    written.push(writeSecretFile(path.join(dir, 'secrets', t.file), token));
  }
  return written;
}
