/**
 * A project's development keys, as `ledgerloop keys` keeps them in one folder (default `.ledgerloop/keys`):
 *
 *   signing-key.json  the workers' capability signing key (private Ed25519 JWK with kid)     0600, secret
 *   jwks.json         the public capability keys the services trust: the current one and any
 *                     rotated out but still trusted (`--retire <kid>` drops one)              0644
 *   issuer.json       the development identity issuer (public keys; `mapping: claims`)       0644
 *   issuer-key.json   that issuer's private key (the CLI mints act tokens with it)            0600, secret
 *   codec-keys        payload encryption keys, `kid:base64,...`, the active one last         0600, secret
 *
 * `ensureProjectKeys` creates what is missing and leaves what exists alone; `rotateProjectKeys` replaces the
 * signing key (its public half stays in jwks.json until retired), adds a codec key (old ones keep decrypting), or
 * replaces the issuer key (its public half stays in issuer.json, so tokens already issued verify until they
 * expire). Every write is atomic (a temporary file renamed over the old one) with its final mode from the start;
 * nothing here returns or logs key material, only key ids and paths.
 *
 * In production the signing key comes from a secret store and tokens from an identity provider.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { JWK } from 'jose';
import { parseCodecKeys } from '../../src/codec/data-converter';
import { parseIdentityConfig, type IssuerConfig } from '../../src/identity/config';
import { DEV_AUDIENCE, DEV_ISSUER, issueIdentityToken, newIssuerKey } from '../../src/identity/issue';
import {
  generateSigningKey,
  jwksJson,
  keySetFromJwks,
  parseSigningKey,
  serializeSigningKey,
  type CapabilityPublicJwk,
} from '../../src/capability/capability-keys';
import { DEFAULT_KEYS_DIR, KEY_FILES, type KeyFileName } from './config';

/** The key files of a project, by role (absolute paths). */
export type ProjectKeyFiles = { readonly dir: string } & { readonly [K in KeyFileName]: string };

/** The key files of `dir` under their default names. */
export function keyFilesIn(dir: string = DEFAULT_KEYS_DIR): ProjectKeyFiles {
  const abs = path.resolve(dir);
  const at = (name: KeyFileName): string => path.join(abs, KEY_FILES[name]);
  return {
    dir: abs,
    signingKey: at('signingKey'),
    jwks: at('jwks'),
    identityIssuers: at('identityIssuers'),
    devIssuerKey: at('devIssuerKey'),
    codecKeys: at('codecKeys'),
  };
}

/** A key file that exists but cannot be used: the message names the file, never its content. */
export class ProjectKeysError extends Error {
  override readonly name = 'ProjectKeysError';
  readonly code = 'Keys.Invalid';
}

/** What one key file holds, for a listing: its role, path, key ids and mode. No key material. */
export interface KeyFileStatus {
  readonly role: KeyFileName;
  readonly file: string;
  readonly exists: boolean;
  /** The key ids in the file (for codec keys: active last). */
  readonly kids: readonly string[];
  /** The active key id, where the file has one. */
  readonly active?: string;
  readonly secret: boolean;
  /** e.g. `0600`; undefined when the file does not exist. */
  readonly mode?: string;
  /** What this call did to the file. */
  readonly action?: 'created' | 'rotated' | 'updated' | 'retired';
}

const SECRET: Readonly<Record<KeyFileName, boolean>> = {
  signingKey: true,
  jwks: false,
  identityIssuers: false,
  devIssuerKey: true,
  codecKeys: true,
};

/** Writes `content` to `file` atomically, with `mode` from the first byte (the folder is made 0700). */
function writeAtomic(file: string, content: string, mode: number): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, content, { mode, flag: 'wx' });
    chmodSync(tmp, mode); // the umask may have narrowed it; a secret must not end up wider either
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

const modeFor = (role: KeyFileName): number => (SECRET[role] ? 0o600 : 0o644);

function readText(file: string, role: KeyFileName): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ProjectKeysError(`${role} file ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

function readJson(file: string, role: KeyFileName): unknown {
  try {
    return JSON.parse(readText(file, role));
  } catch (err) {
    if (err instanceof ProjectKeysError) throw err;
    throw new ProjectKeysError(`${role} file ${file} is not JSON`);
  }
}

/** Wraps a parse of a key file so its error names the file (the parsers' messages carry no key material). */
function parsed<T>(file: string, role: KeyFileName, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ProjectKeysError) throw err;
    throw new ProjectKeysError(`${role} file ${file}: ${(err as Error).message}`);
  }
}

function readJwks(files: ProjectKeyFiles): CapabilityPublicJwk[] {
  if (!existsSync(files.jwks)) return [];
  const text = readText(files.jwks, 'jwks');
  return parsed(files.jwks, 'jwks', () => [...keySetFromJwks(text).toJwks().keys]);
}

function writeJwks(files: ProjectKeyFiles, keys: readonly CapabilityPublicJwk[]): void {
  writeAtomic(files.jwks, `${JSON.stringify(JSON.parse(jwksJson(keys)), null, 2)}\n`, modeFor('jwks'));
}

interface IssuerKeyFile {
  readonly issuer: string;
  readonly audience: string;
  readonly privateJwk: JWK & { readonly kid: string };
}

function readIssuerKey(files: ProjectKeyFiles): IssuerKeyFile {
  const raw = readJson(files.devIssuerKey, 'devIssuerKey') as Partial<IssuerKeyFile> | null;
  const jwk = raw?.privateJwk;
  if (typeof raw?.issuer !== 'string' || typeof jwk?.kid !== 'string' || typeof jwk.d !== 'string')
    throw new ProjectKeysError(`devIssuerKey file ${files.devIssuerKey} is not a development issuer key file`);
  return { issuer: raw.issuer, audience: raw.audience ?? DEV_AUDIENCE, privateJwk: jwk };
}

function readIssuers(files: ProjectKeyFiles): IssuerConfig[] {
  const raw = readJson(files.identityIssuers, 'identityIssuers');
  return parsed(files.identityIssuers, 'identityIssuers', () => [...parseIdentityConfig(raw)]);
}

const stamp = (): string => new Date().toISOString().slice(0, 10).replace(/-/g, '');
const newKid = (prefix: string): string => `${prefix}-${stamp()}-${randomBytes(3).toString('hex')}`;

function createSigningKey(files: ProjectKeyFiles): void {
  const key = generateSigningKey(newKid('cap'));
  writeAtomic(files.signingKey, `${JSON.stringify(JSON.parse(serializeSigningKey(key)), null, 2)}\n`, 0o600);
  writeJwks(files, [...readJwks(files).filter((k) => k.kid !== key.kid), key.publicJwk]);
}

async function createIssuer(files: ProjectKeyFiles, keepPublic: readonly JWK[]): Promise<void> {
  const kid = newKid('dev');
  const { publicJwk, privateJwk } = await newIssuerKey(kid);
  const config: IssuerConfig = {
    issuer: DEV_ISSUER,
    audience: DEV_AUDIENCE,
    jwks: { keys: [...keepPublic, publicJwk] as IssuerConfig['jwks']['keys'] },
    mapping: 'claims',
    subjects: {},
    maxLifetimeSec: 86_400,
  };
  // The private key first: an issuer file naming a key nobody holds would verify tokens nobody can mint.
  writeAtomic(
    files.devIssuerKey,
    `${JSON.stringify({ issuer: DEV_ISSUER, audience: DEV_AUDIENCE, privateJwk })}\n`,
    0o600,
  );
  writeAtomic(files.identityIssuers, `${JSON.stringify(config, null, 2)}\n`, modeFor('identityIssuers'));
}

function readCodecSpec(files: ProjectKeyFiles): string {
  const spec = readText(files.codecKeys, 'codecKeys').trim();
  parsed(files.codecKeys, 'codecKeys', () => parseCodecKeys(spec));
  return spec;
}

function addCodecKey(files: ProjectKeyFiles, existing: string | undefined): void {
  const kid = newKid('codec');
  const entry = `${kid}:${randomBytes(32).toString('base64')}`;
  writeAtomic(files.codecKeys, `${existing ? `${existing},${entry}` : entry}\n`, 0o600);
}

/** The status of every key file: ids, modes, existence. Throws ProjectKeysError for a file that cannot be read. */
export function describeProjectKeys(
  files: ProjectKeyFiles,
  actions: Partial<Record<KeyFileName, KeyFileStatus['action']>> = {},
): KeyFileStatus[] {
  const roles = Object.keys(KEY_FILES) as KeyFileName[];
  return roles.map((role) => {
    const file = files[role];
    const base = { role, file, secret: SECRET[role], ...(actions[role] ? { action: actions[role] } : {}) };
    if (!existsSync(file)) return { ...base, exists: false, kids: [] };
    const mode = (statSync(file).mode & 0o777).toString(8).padStart(4, '0');
    let kids: string[];
    let active: string | undefined;
    switch (role) {
      case 'signingKey':
        active = parsed(file, role, () => parseSigningKey(readText(file, role))).kid;
        kids = [active];
        break;
      case 'jwks':
        kids = readJwks(files).map((k) => k.kid);
        break;
      case 'identityIssuers':
        kids = readIssuers(files).flatMap((i) => i.jwks.keys.map((k) => k.kid));
        break;
      case 'devIssuerKey':
        active = readIssuerKey(files).privateJwk.kid;
        kids = [active];
        break;
      case 'codecKeys': {
        const ring = parseCodecKeys(readCodecSpec(files));
        kids = [...ring.keys.keys()];
        active = ring.activeKeyId;
        break;
      }
    }
    return { ...base, exists: true, kids, mode, ...(active ? { active } : {}) };
  });
}

/**
 * Creates every key file that is missing; existing ones are checked (readable, valid) and left alone. A signing
 * key whose public half is missing from jwks.json is added to it.
 */
export async function ensureProjectKeys(files: ProjectKeyFiles): Promise<KeyFileStatus[]> {
  const actions: Partial<Record<KeyFileName, KeyFileStatus['action']>> = {};
  if (!existsSync(files.signingKey)) {
    actions.jwks = existsSync(files.jwks) ? 'updated' : 'created';
    createSigningKey(files);
    actions.signingKey = 'created';
  } else {
    const key = parsed(files.signingKey, 'signingKey', () => parseSigningKey(readText(files.signingKey, 'signingKey')));
    const jwks = readJwks(files);
    if (!jwks.some((k) => k.kid === key.kid && k.x === key.publicJwk.x)) {
      actions.jwks = existsSync(files.jwks) ? 'updated' : 'created';
      writeJwks(files, [...jwks.filter((k) => k.kid !== key.kid), key.publicJwk]);
    }
  }
  if (!existsSync(files.devIssuerKey)) {
    const keep = existsSync(files.identityIssuers)
      ? readIssuers(files)
          .filter((i) => i.issuer === DEV_ISSUER)
          .flatMap((i) => i.jwks.keys)
      : [];
    await createIssuer(files, keep as JWK[]);
    actions.devIssuerKey = 'created';
    actions.identityIssuers = keep.length > 0 ? 'updated' : 'created';
  } else if (!existsSync(files.identityIssuers)) {
    throw new ProjectKeysError(
      `${files.devIssuerKey} exists without its issuer file ${files.identityIssuers}: rotate the issuer (ledgerloop keys rotate --issuer) to write both`,
    );
  }
  if (!existsSync(files.codecKeys)) {
    addCodecKey(files, undefined);
    actions.codecKeys = 'created';
  }
  return describeProjectKeys(files, actions);
}

/** Which keys a rotation replaces. */
export type RotatedKey = 'capability' | 'issuer' | 'codec';

/**
 * Rotates one kind of key (creating any other missing file first). The old public key stays trusted (jwks.json,
 * issuer.json) and an old codec key keeps decrypting, until retired.
 */
export async function rotateProjectKeys(files: ProjectKeyFiles, which: RotatedKey): Promise<KeyFileStatus[]> {
  const before = await ensureProjectKeys(files);
  const created = new Set(before.filter((s) => s.action === 'created').map((s) => s.role));
  const actions: Partial<Record<KeyFileName, KeyFileStatus['action']>> = Object.fromEntries(
    before.filter((s) => s.action !== undefined).map((s) => [s.role, s.action]),
  );
  if (which === 'capability' && !created.has('signingKey')) {
    createSigningKey(files);
    actions.signingKey = 'rotated';
    actions.jwks = 'updated';
  } else if (which === 'issuer' && !created.has('devIssuerKey')) {
    const keep = readIssuers(files)
      .filter((i) => i.issuer === DEV_ISSUER)
      .flatMap((i) => i.jwks.keys);
    await createIssuer(files, keep as JWK[]);
    actions.devIssuerKey = 'rotated';
    actions.identityIssuers = 'updated';
  } else if (which === 'codec' && !created.has('codecKeys')) {
    addCodecKey(files, readCodecSpec(files));
    actions.codecKeys = 'rotated';
  }
  return describeProjectKeys(files, actions);
}

/**
 * Stops trusting a rotated-out key: a capability key leaves jwks.json, an issuer key leaves issuer.json, a codec
 * key leaves codec-keys. The key in use (the signing key, the issuer's current key, the active codec key) cannot
 * be retired: rotate first.
 */
export function retireProjectKey(files: ProjectKeyFiles, kid: string): KeyFileStatus[] {
  const actions: Partial<Record<KeyFileName, KeyFileStatus['action']>> = {};
  const inUse = [
    existsSync(files.signingKey)
      ? parsed(files.signingKey, 'signingKey', () => parseSigningKey(readText(files.signingKey, 'signingKey'))).kid
      : undefined,
    existsSync(files.devIssuerKey) ? readIssuerKey(files).privateJwk.kid : undefined,
    existsSync(files.codecKeys) ? parseCodecKeys(readCodecSpec(files)).activeKeyId : undefined,
  ];
  if (inUse.includes(kid)) throw new ProjectKeysError(`key ${kid} is in use: rotate it first, then retire it`);
  const jwks = readJwks(files);
  if (jwks.some((k) => k.kid === kid)) {
    writeJwks(
      files,
      jwks.filter((k) => k.kid !== kid),
    );
    actions.jwks = 'retired';
  }
  if (existsSync(files.identityIssuers)) {
    const issuers = readIssuers(files);
    if (issuers.some((i) => i.jwks.keys.some((k) => k.kid === kid))) {
      const kept = issuers.map((i) => ({ ...i, jwks: { keys: i.jwks.keys.filter((k) => k.kid !== kid) } }));
      const out = kept.length === 1 ? kept[0] : kept;
      writeAtomic(files.identityIssuers, `${JSON.stringify(out, null, 2)}\n`, modeFor('identityIssuers'));
      actions.identityIssuers = 'retired';
    }
  }
  if (existsSync(files.codecKeys)) {
    const spec = readCodecSpec(files);
    const entries = spec.split(',').map((e) => e.trim());
    const kept = entries.filter((e) => e.slice(0, e.indexOf(':')) !== kid);
    if (kept.length !== entries.length) {
      writeAtomic(files.codecKeys, `${kept.join(',')}\n`, 0o600);
      actions.codecKeys = 'retired';
    }
  }
  if (Object.keys(actions).length === 0) throw new ProjectKeysError(`no key ${kid} in ${files.dir}`);
  return describeProjectKeys(files, actions);
}

/** What a development token asserts. */
export interface DevTokenRequest {
  readonly principal: string;
  readonly tenant: string;
  readonly roles?: readonly string[];
  /** Lifetime in seconds; default 3600, at most the issuer's maxLifetimeSec (86400). */
  readonly ttlSec?: number;
}

/**
 * A development token from the project's dev issuer, in memory: a session token, or with `scope` a token for
 * exactly that act (what `ledgerloop start` sends for a project without `--token`). Never written or printed here.
 */
export async function mintDevToken(
  files: ProjectKeyFiles,
  req: DevTokenRequest,
  scope?: { readonly purpose: 'start'; readonly run: string },
): Promise<string> {
  if (!existsSync(files.devIssuerKey))
    throw new ProjectKeysError(`no development issuer in ${files.dir}: run \`ledgerloop keys\` first`);
  const key = readIssuerKey(files);
  const ttlSec = req.ttlSec ?? (scope === undefined ? 3600 : 600);
  if (!Number.isInteger(ttlSec) || ttlSec < 1 || ttlSec > 86_400)
    throw new ProjectKeysError('a development token lives 1 to 86400 seconds');
  try {
    return await issueIdentityToken(
      {
        subject: req.principal,
        principal: req.principal,
        tenant: req.tenant,
        roles: [...(req.roles ?? [])],
        ...(scope ?? {}),
      },
      { issuer: key.issuer, audience: key.audience, kid: key.privateJwk.kid, privateJwk: key.privateJwk, ttlSec },
    );
  } catch (err) {
    throw new ProjectKeysError((err as Error).message);
  }
}

/**
 * Issues a development session token with the project's dev issuer and writes it to `out` (0600). A session
 * token proves who you are; the CLI trades it for a token for each act (start, approve, ...) with the same key.
 */
export async function issueDevToken(files: ProjectKeyFiles, req: DevTokenRequest, out: string): Promise<void> {
  const token = await mintDevToken(files, req);
  writeAtomic(path.resolve(out), `${token}\n`, 0o600);
}
