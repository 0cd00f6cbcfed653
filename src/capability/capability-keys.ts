/**
 * Capability keys: Ed25519 signing keys (held only by the signers: the dispatch activity of a worker, and the
 * outbox relay) and public key sets keyed by `kid` (held by the services that verify). One module makes,
 * reads and writes them, so every stack (demo, tests, fault lab, bench) plumbs keys the same way.
 *
 * Environment:
 * - `LEDGERLOOP_CAPABILITY_SIGNING_KEY` (workers): a private Ed25519 JWK with a `kid` (JSON), a PKCS8 PEM
 *   (its kid from `LEDGERLOOP_CAPABILITY_SIGNING_KID`, else the key's RFC 7638 thumbprint), or a path to either.
 * - `LEDGERLOOP_RELAY_SIGNING_KEY` (the orders outbox relay): the same forms, the relay's own key.
 * - `LEDGERLOOP_CAPABILITY_KEYS` (services): a JWKS (`{"keys":[...]}`) of public keys, or a path to one. A key
 *   may carry `"scopes": [...]`: a token signed with it is accepted for those scopes only (the relay's key).
 * - `LEDGERLOOP_CAPABILITY_SKEW_MS` (services): clock skew allowed on `iat`/`exp`; default 30 s.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { EVENTS_SCOPE } from './events-contract';
import { configValue } from '../config';
import { MemoryJtiRegistry, type JtiRegistry } from './capability-replay';

/** Environment variable names (their shapes: src/config.ts). */
export const SIGNING_KEY_ENV = 'LEDGERLOOP_CAPABILITY_SIGNING_KEY';
export const RELAY_SIGNING_KEY_ENV = 'LEDGERLOOP_RELAY_SIGNING_KEY';
export const KEY_SET_ENV = 'LEDGERLOOP_CAPABILITY_KEYS';
/** The retired shared HMAC key: refused with a pointer to its replacement. */
export const RETIRED_HMAC_ENV = 'LEDGERLOOP_CAPABILITY_KEY';

/** Clock skew a verifier allows on `iat` and `exp` by default. */
export const DEFAULT_SKEW_MS = 30_000;

/** A public Ed25519 key as a JWK, with its id and optional scope restriction. */
export interface CapabilityPublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg?: 'EdDSA';
  readonly use?: 'sig';
  /** When present: tokens signed with this key are accepted for these scopes only. */
  readonly scopes?: readonly string[];
}

export interface CapabilityJwks {
  readonly keys: readonly CapabilityPublicJwk[];
}

/** A signer's key: the private key never leaves the process that holds it. */
export interface CapabilitySigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicJwk: CapabilityPublicJwk;
}

export class CapabilityKeyError extends Error {
  override readonly name = 'Capability.KeyInvalid';
}

const KID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

function checkKid(kid: unknown): string {
  if (typeof kid !== 'string' || !KID_PATTERN.test(kid))
    throw new CapabilityKeyError('a capability key needs a kid of 1-128 characters [A-Za-z0-9._:-]');
  return kid;
}

/** RFC 7638 thumbprint of an Ed25519 public key (base64url SHA-256 of its required members). */
export function jwkThumbprint(x: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x }))
    .digest('base64url');
}

function publicOf(privateKey: KeyObject, kid: string): CapabilityPublicJwk {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string')
    throw new CapabilityKeyError('capability keys must be Ed25519');
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: 'EdDSA', use: 'sig' };
}

function signingKeyOf(privateKey: KeyObject, kid: string): CapabilitySigningKey {
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new CapabilityKeyError('capability signing keys must be Ed25519');
  return { kid: checkKid(kid), privateKey, publicJwk: publicOf(privateKey, kid) };
}

/** A fresh Ed25519 signing key; its kid defaults to `<prefix>-<random>`. */
export function generateSigningKey(kid = `cap-${randomBytes(6).toString('hex')}`): CapabilitySigningKey {
  return signingKeyOf(generateKeyPairSync('ed25519').privateKey, kid);
}

/** The private JWK (with `kid`) as JSON: the form `LEDGERLOOP_CAPABILITY_SIGNING_KEY` takes. A secret. */
export function serializeSigningKey(key: CapabilitySigningKey): string {
  const jwk = key.privateKey.export({ format: 'jwk' });
  return JSON.stringify({ ...jwk, kid: key.kid, alg: 'EdDSA', use: 'sig' });
}

/**
 * A JWK as `createPrivateKey` takes it, named through that function: `@types/node` moved `JsonWebKey` out of
 * `node:crypto` (it is a global in newer versions), and this name holds under both.
 */
type JwkInput = Extract<Parameters<typeof createPrivateKey>[0], { format: 'jwk' }>['key'];

/** Reads a signing key: a private JWK with `kid` (JSON) or a PKCS8 PEM (kid given, else the thumbprint). */
export function parseSigningKey(text: string, kid?: string): CapabilitySigningKey {
  const trimmed = text.trim();
  let privateKey: KeyObject;
  let id = kid;
  try {
    if (trimmed.startsWith('{')) {
      const jwk = JSON.parse(trimmed) as JwkInput & { kid?: unknown };
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string')
        throw new CapabilityKeyError('the signing key must be a private Ed25519 JWK');
      privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
      id ??= typeof jwk.kid === 'string' ? jwk.kid : undefined;
    } else if (trimmed.startsWith('-----BEGIN')) {
      privateKey = createPrivateKey({ key: trimmed, format: 'pem' });
    } else {
      throw new CapabilityKeyError('the signing key must be a private JWK (JSON) or a PKCS8 PEM');
    }
  } catch (err) {
    if (err instanceof CapabilityKeyError) throw err;
    throw new CapabilityKeyError(`the signing key could not be read: ${(err as Error).message}`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new CapabilityKeyError('capability signing keys must be Ed25519');
  id ??= jwkThumbprint(publicOf(privateKey, 'x').x);
  return signingKeyOf(privateKey, id);
}

/** A value that is the content itself or a path to a file holding it. */
function inlineOrFile(value: string, name: string): string {
  const t = value.trim();
  if (t.startsWith('{') || t.startsWith('-----BEGIN')) return t;
  if (!existsSync(t)) throw new CapabilityKeyError(`${name} is neither inline key material nor a readable file`);
  return readFileSync(t, 'utf8');
}

function refuseRetired(env: NodeJS.ProcessEnv): void {
  if (env[RETIRED_HMAC_ENV]) {
    throw new CapabilityKeyError(
      `${RETIRED_HMAC_ENV} (a shared HMAC key) is retired: signers take ${SIGNING_KEY_ENV}, services take ${KEY_SET_ENV}`,
    );
  }
}

/** The signing key named by `name` in the environment, or undefined when it is unset or empty. */
export function signingKeyFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  name: typeof SIGNING_KEY_ENV | typeof RELAY_SIGNING_KEY_ENV = SIGNING_KEY_ENV,
): CapabilitySigningKey | undefined {
  refuseRetired(env);
  const raw = configValue(name, env);
  if (!raw) return undefined;
  const kid = name === SIGNING_KEY_ENV ? configValue('LEDGERLOOP_CAPABILITY_SIGNING_KID', env) : undefined;
  return parseSigningKey(inlineOrFile(raw, name), kid);
}

/** A public key for a key set; `scopes` restricts what tokens signed with it may be used for. */
export function publicJwkOf(
  key: CapabilitySigningKey,
  opts: { readonly scopes?: readonly string[] } = {},
): CapabilityPublicJwk {
  return { ...key.publicJwk, ...(opts.scopes ? { scopes: [...opts.scopes] } : {}) };
}

interface TrustedKey {
  readonly jwk: CapabilityPublicJwk;
  readonly key: KeyObject;
}

/**
 * The public keys a service trusts, by `kid`. Rotation: add the new key, move signers to it, remove the old
 * one once its last token has expired (two keys are valid during the switch). It also holds the service's
 * record of used token ids (`jti`), so a capability is accepted once.
 */
export class CapabilityKeySet {
  private readonly byKid = new Map<string, TrustedKey>();
  readonly skewMs: number;
  readonly replay: JtiRegistry;

  constructor(
    keys: readonly CapabilityPublicJwk[],
    opts: { readonly skewMs?: number; readonly replay?: JtiRegistry } = {},
  ) {
    for (const raw of keys) {
      const jwk = checkPublicJwk(raw);
      if (this.byKid.has(jwk.kid)) throw new CapabilityKeyError(`duplicate capability key id ${jwk.kid}`);
      this.byKid.set(jwk.kid, {
        jwk,
        key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }),
      });
    }
    const skew = opts.skewMs ?? DEFAULT_SKEW_MS;
    if (!Number.isSafeInteger(skew) || skew < 0 || skew > 300_000)
      throw new CapabilityKeyError('capability clock skew must be 0..300000 ms');
    this.skewMs = skew;
    this.replay = opts.replay ?? new MemoryJtiRegistry();
  }

  get size(): number {
    return this.byKid.size;
  }

  /** The public key and its restrictions for a kid, or undefined for a key this set does not trust. */
  get(kid: string): { readonly key: KeyObject; readonly scopes?: readonly string[] } | undefined {
    const t = this.byKid.get(kid);
    return t === undefined ? undefined : { key: t.key, ...(t.jwk.scopes ? { scopes: t.jwk.scopes } : {}) };
  }

  kids(): string[] {
    return [...this.byKid.keys()];
  }

  toJwks(): CapabilityJwks {
    return { keys: [...this.byKid.values()].map((t) => t.jwk) };
  }

  /** The same keys with another used-token record (e.g. one kept in the service's database). */
  withReplay(replay: JtiRegistry): CapabilityKeySet {
    return new CapabilityKeySet(this.toJwks().keys, { skewMs: this.skewMs, replay });
  }
}

function checkPublicJwk(raw: unknown): CapabilityPublicJwk {
  const j = raw as Partial<CapabilityPublicJwk> & { d?: unknown; kty?: unknown };
  if (typeof j !== 'object' || j === null) throw new CapabilityKeyError('a key set entry must be a JWK object');
  if (j.d !== undefined)
    throw new CapabilityKeyError('a capability key set holds public keys only (found a private key)');
  if (j.kty !== 'OKP' || j.crv !== 'Ed25519' || typeof j.x !== 'string')
    throw new CapabilityKeyError('capability keys must be Ed25519 (kty OKP, crv Ed25519)');
  if (j.alg !== undefined && j.alg !== 'EdDSA')
    throw new CapabilityKeyError(`capability key ${String(j.kid)} has alg ${String(j.alg)}, not EdDSA`);
  const scopes = j.scopes;
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((s) => typeof s === 'string' && s.length > 0))
  ) {
    throw new CapabilityKeyError(`capability key ${String(j.kid)}: scopes must be a non-empty list of strings`);
  }
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: j.x,
    kid: checkKid(j.kid),
    alg: 'EdDSA',
    use: 'sig',
    ...(scopes ? { scopes: [...scopes] } : {}),
  };
}

/** Reads a JWKS (JSON text or object). */
export function keySetFromJwks(
  jwks: string | CapabilityJwks,
  opts: { readonly skewMs?: number; readonly replay?: JtiRegistry } = {},
): CapabilityKeySet {
  let parsed: unknown;
  try {
    parsed = typeof jwks === 'string' ? JSON.parse(jwks) : jwks;
  } catch (err) {
    throw new CapabilityKeyError(`the capability key set is not JSON: ${(err as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0)
    throw new CapabilityKeyError('the capability key set must be a JWKS with at least one key');
  return new CapabilityKeySet(keys as CapabilityPublicJwk[], opts);
}

/** The key set of `LEDGERLOOP_CAPABILITY_KEYS`, or undefined when it is unset or empty. */
export function keySetFromEnv(env: NodeJS.ProcessEnv = process.env): CapabilityKeySet | undefined {
  refuseRetired(env);
  const raw = configValue(KEY_SET_ENV, env);
  if (!raw) return undefined;
  const skewMs = configValue('LEDGERLOOP_CAPABILITY_SKEW_MS', env);
  return keySetFromJwks(inlineOrFile(raw, KEY_SET_ENV), skewMs === undefined ? {} : { skewMs });
}

/** A JWKS as the JSON text `LEDGERLOOP_CAPABILITY_KEYS` takes. */
export function jwksJson(keys: readonly CapabilityPublicJwk[]): string {
  return JSON.stringify({ keys });
}

/**
 * Everything a local stack (demo, tests, fault lab, bench) needs: a dispatch key for the workers, the relay's own
 * key (trusted for the event scope only), and the environment each kind of process gets.
 */
export interface CapabilityTrust {
  readonly dispatch: CapabilitySigningKey;
  readonly relay: CapabilitySigningKey;
  /** The services' key set: the dispatch key, and the relay key restricted to `relayScopes`. */
  readonly jwks: CapabilityJwks;
  readonly serviceEnv: Readonly<Record<string, string>>;
  readonly workerEnv: Readonly<Record<string, string>>;
  readonly relayEnv: Readonly<Record<string, string>>;
}

/** The scope the outbox relay's key may sign (the notifications consumer's event scope). */
export const RELAY_SCOPES: readonly string[] = [EVENTS_SCOPE];

export function generateCapabilityTrust(
  opts: { readonly dispatch?: CapabilitySigningKey; readonly relay?: CapabilitySigningKey } = {},
): CapabilityTrust {
  const dispatch = opts.dispatch ?? generateSigningKey(`dispatch-${randomBytes(4).toString('hex')}`);
  const relay = opts.relay ?? generateSigningKey(`relay-${randomBytes(4).toString('hex')}`);
  const jwks: CapabilityJwks = { keys: [publicJwkOf(dispatch), publicJwkOf(relay, { scopes: RELAY_SCOPES })] };
  return {
    dispatch,
    relay,
    jwks,
    serviceEnv: { [KEY_SET_ENV]: JSON.stringify(jwks) },
    workerEnv: { [SIGNING_KEY_ENV]: serializeSigningKey(dispatch) },
    relayEnv: { [RELAY_SIGNING_KEY_ENV]: serializeSigningKey(relay) },
  };
}
