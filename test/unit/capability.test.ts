import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import {
  CapabilityError,
  capabilityDigest,
  signCapability,
  verifyCapability,
  type CapabilityClaims,
  type CapabilityRequest,
} from '../../src/capability/capability';
import {
  CapabilityKeyError,
  CapabilityKeySet,
  generateCapabilityTrust,
  generateSigningKey,
  keySetFromEnv,
  keySetFromJwks,
  parseSigningKey,
  publicJwkOf,
  serializeSigningKey,
  signingKeyFromEnv,
} from '../../src/capability/capability-keys';
import { SqliteJtiRegistry } from '../../src/capability/capability-replay';
import { EVENTS_SCOPE } from '../../src/capability/events-contract';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const grant: Omit<CapabilityClaims, 'v'> = {
  operationKey: 'op_abc',
  keyMode: 'exact',
  argumentsHash: 'h1',
  tenant: 'acme',
  principalId: 'user:alice',
  scope: 'wallet.charge',
  action: 'wallet.debit',
  resource: 'acme/account/acct_1',
  policyVersion: 'p/1',
  expiresAt: new Date(NOW + 60_000).toISOString(),
};
const req: CapabilityRequest = {
  key: 'op_abc',
  argumentsHash: 'h1',
  tenant: 'acme',
  scope: 'wallet.charge',
  audience: 'wallet',
  nowMs: NOW,
};
const oldKey = generateSigningKey('k-2025');
const newKey = generateSigningKey('k-2026');
const keys = (...k: ReturnType<typeof generateSigningKey>[]): CapabilityKeySet =>
  new CapabilityKeySet(k.map((x) => publicJwkOf(x)));
const sign = (over: Partial<typeof grant> = {}, key = oldKey, audience = 'wallet', nowMs = NOW) =>
  signCapability({ ...grant, ...over }, key, { audience, nowMs }).token;

describe('capabilities are narrow, short-lived, signed with Ed25519 and accepted once', () => {
  test('a capability verifies for exactly its call and service, and says who, what, when and which token', () => {
    const { token, claims, record } = signCapability(grant, oldKey, { audience: 'wallet', nowMs: NOW });
    expect(verifyCapability(token, keys(oldKey), req)).toEqual(claims);
    expect(claims).toMatchObject({ v: 2, sub: 'user:alice', aud: 'wallet', iat: NOW / 1000, exp: NOW / 1000 + 60 });
    expect(record).toEqual({
      capabilityDigest: createHash('sha256').update(token).digest('hex'),
      kid: 'k-2025',
      jti: claims.jti,
      aud: 'wallet',
      exp: claims.exp,
    });
    expect(capabilityDigest(token)).toBe(record.capabilityDigest);
  });

  test.each<[string, Partial<CapabilityRequest>]>([
    ['another key', { key: 'op_other' }],
    ['other arguments', { argumentsHash: 'h2' }],
    ['another tenant', { tenant: 'globex' }],
    ['another effect scope', { scope: 'wallet.refund' }],
    ['a derived key under an exact capability', { key: 'op_abc~retry2' }],
    ['another service (aud)', { audience: 'inventory' }],
  ])('refused for %s', (_, over) => {
    expect(() => verifyCapability(sign(), keys(oldKey), { ...req, ...over })).toThrow(CapabilityError);
  });

  test('an unknown kid is refused, and so is a token whose signature is not the kid key', () => {
    expect(() => verifyCapability(sign(), keys(newKey), req)).toThrow('not trusted');
    const impostor = generateSigningKey('k-2025'); // same kid, other key
    expect(() => verifyCapability(sign({}, impostor), keys(oldKey), req)).toThrow('signature');
    expect(() => verifyCapability(undefined, keys(oldKey), req)).toThrow('required');
  });

  test('a tampered claim breaks the signature', () => {
    const [h, , s] = sign().split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(sign().split('.')[1]!, 'base64url').toString()), tenant: 'globex' }),
    ).toString('base64url');
    expect(() => verifyCapability(`${h}.${forged}.${s}`, keys(oldKey), { ...req, tenant: 'globex' })).toThrow(
      'signature',
    );
  });

  test('rotation: old and new kid both verify while both are trusted; with the old one removed, its tokens are refused', () => {
    const both = keys(oldKey, newKey);
    expect(verifyCapability(sign({}, oldKey), both, req).operationKey).toBe('op_abc');
    expect(verifyCapability(sign({}, newKey), both, req).operationKey).toBe('op_abc');
    const after = keys(newKey);
    expect(() => verifyCapability(sign({}, oldKey), after, req)).toThrow('not trusted');
    expect(verifyCapability(sign({}, newKey), after, req).tenant).toBe('acme');
  });

  test('expiry allows the clock skew (30 s by default) and no more', () => {
    const exp = NOW + 60_000;
    expect(verifyCapability(sign(), keys(oldKey), { ...req, nowMs: exp + 29_000 }).aud).toBe('wallet');
    expect(() => verifyCapability(sign(), keys(oldKey), { ...req, nowMs: exp + 30_000 })).toThrow('expired');
    const strict = new CapabilityKeySet([publicJwkOf(oldKey)], { skewMs: 0 });
    expect(() => verifyCapability(sign(), strict, { ...req, nowMs: exp })).toThrow('expired');
  });

  test('a token issued in the future beyond the skew is refused; within it, accepted', () => {
    const ahead = sign({ expiresAt: new Date(NOW + 120_000).toISOString() }, oldKey, 'wallet', NOW + 60_000);
    expect(() => verifyCapability(ahead, keys(oldKey), req)).toThrow('future');
    const slightly = sign({}, oldKey, 'wallet', NOW + 20_000);
    expect(verifyCapability(slightly, keys(oldKey), req).iat).toBe((NOW + 20_000) / 1000);
  });

  test('a token living longer than 10 minutes is refused whatever it says', () => {
    const long = signCapability({ ...grant, expiresAt: new Date(NOW + 3_600_000).toISOString() }, oldKey, {
      audience: 'wallet',
      nowMs: NOW,
      ttlMs: 3_600_000,
    }).token;
    expect(() => verifyCapability(long, keys(oldKey), req)).toThrow('longer');
  });

  test('a jti is accepted once: the same token again is a replay, even for the same call under the same key', () => {
    const set = keys(oldKey);
    const token = sign();
    verifyCapability(token, set, req);
    expect(() => verifyCapability(token, set, req)).toThrow('already used');
    // A retry carries a fresh token (a fresh jti): accepted.
    expect(verifyCapability(sign(), set, req).operationKey).toBe('op_abc');
  });

  test('a refused token is not spent: the same token still verifies for its own request', () => {
    const set = keys(oldKey);
    const token = sign();
    expect(() => verifyCapability(token, set, { ...req, tenant: 'globex' })).toThrow('tenant');
    expect(verifyCapability(token, set, req).tenant).toBe('acme');
  });

  test('used ids kept in SQLite survive a restart of the verifier (a new key set on the same database)', () => {
    const db = new BetterSqlite3(':memory:');
    const token = sign();
    verifyCapability(token, keys(oldKey).withReplay(new SqliteJtiRegistry(db)), req);
    expect(() => verifyCapability(token, keys(oldKey).withReplay(new SqliteJtiRegistry(db)), req)).toThrow(
      'already used',
    );
    db.close();
  });

  test('an HMAC token (alg HS256), alg none and a pre-JWS token are refused, even naming a trusted kid', () => {
    const set = keys(oldKey);
    const claims = JSON.parse(Buffer.from(sign().split('.')[1]!, 'base64url').toString()) as object;
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const hsInput = `${enc({ alg: 'HS256', typ: 'ledgerloop-cap+jwt', kid: 'k-2025' })}.${enc(claims)}`;
    const hs = `${hsInput}.${createHmac('sha256', oldKey.publicJwk.x).update(hsInput).digest('base64url')}`;
    expect(() => verifyCapability(hs, set, req)).toThrow('EdDSA only');
    const none = `${enc({ alg: 'none', typ: 'ledgerloop-cap+jwt', kid: 'k-2025' })}.${enc(claims)}.`;
    expect(() => verifyCapability(none, set, req)).toThrow(CapabilityError);
    const v1 = `${enc({ v: 1, ...grant })}.${createHmac('sha256', 'k').update('x').digest('base64url')}`;
    expect(() => verifyCapability(v1, set, req)).toThrow('malformed');
  });

  test("the relay's key is trusted for the event scope only", () => {
    const trust = generateCapabilityTrust();
    const set = keySetFromJwks(trust.serviceEnv.LEDGERLOOP_CAPABILITY_KEYS!);
    const evt = { ...req, scope: EVENTS_SCOPE, audience: 'notifications' };
    expect(verifyCapability(sign({ scope: EVENTS_SCOPE }, trust.relay, 'notifications'), set, evt).scope).toBe(
      EVENTS_SCOPE,
    );
    const email = { ...req, scope: 'notifications.email', audience: 'notifications' };
    expect(() =>
      verifyCapability(sign({ scope: 'notifications.email' }, trust.relay, 'notifications'), set, email),
    ).toThrow('may not sign scope');
    // The dispatch key is not restricted to it (and is refused by the relay scope rule nowhere).
    expect(
      verifyCapability(sign({ scope: 'notifications.email' }, trust.dispatch, 'notifications'), set, email).scope,
    ).toBe('notifications.email');
  });
});

describe('capability keys: one module makes, reads and writes them', () => {
  test('a signing key round-trips as a private JWK (with its kid) and as PKCS8 PEM (kid given or thumbprint)', () => {
    const k = generateSigningKey('dispatch-1');
    const back = parseSigningKey(serializeSigningKey(k));
    expect(back.kid).toBe('dispatch-1');
    expect(verifyCapability(sign({}, back), keys(k), req).aud).toBe('wallet');
    const pem = k.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(parseSigningKey(pem, 'from-pem').kid).toBe('from-pem');
    expect(parseSigningKey(pem).kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('environment: the retired HMAC key is refused; a key set holds public keys only', () => {
    expect(() => signingKeyFromEnv({ LEDGERLOOP_CAPABILITY_KEY: 'x'.repeat(44) })).toThrow(CapabilityKeyError);
    expect(() => keySetFromEnv({ LEDGERLOOP_CAPABILITY_KEY: 'x'.repeat(44) })).toThrow('retired');
    const k = generateSigningKey('k');
    expect(() => keySetFromJwks({ keys: [JSON.parse(serializeSigningKey(k))] })).toThrow('public keys only');
    expect(signingKeyFromEnv({ LEDGERLOOP_CAPABILITY_SIGNING_KEY: serializeSigningKey(k) })?.kid).toBe('k');
    const set = keySetFromEnv({
      LEDGERLOOP_CAPABILITY_KEYS: JSON.stringify({ keys: [publicJwkOf(k)] }),
      LEDGERLOOP_CAPABILITY_SKEW_MS: '5000',
    });
    expect(set?.kids()).toEqual(['k']);
    expect(set?.skewMs).toBe(5000);
    expect(keySetFromEnv({})).toBeUndefined();
  });

  test('the token is a standard compact JWS: jose (in a child process: it is ESM-only) verifies it with the public JWK', () => {
    const script = `import * as jose from 'jose';
      const [token, jwk] = process.argv.slice(1);
      const { payload, protectedHeader } = await jose.compactVerify(token, await jose.importJWK(JSON.parse(jwk), 'EdDSA'));
      console.log(JSON.stringify({ header: protectedHeader, claims: JSON.parse(new TextDecoder().decode(payload)) }));`;
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', script, sign(), JSON.stringify(oldKey.publicJwk)],
      { encoding: 'utf8' },
    );
    const { header, claims } = JSON.parse(out) as { header: object; claims: object };
    expect(header).toMatchObject({ alg: 'EdDSA', kid: 'k-2025', typ: 'ledgerloop-cap+jwt' });
    expect(claims).toMatchObject({ aud: 'wallet', operationKey: 'op_abc' });
  });
});
