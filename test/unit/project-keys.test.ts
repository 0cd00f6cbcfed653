/**
 * `ledgerloop keys` (host/project/keys.ts): the files it writes, their modes, what rotation keeps trusted, and that
 * no listing carries key material.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { parseCodecKeys } from '../../src/codec/data-converter';
import { parseIdentityConfig, staticIdentitySource } from '../../src/identity/config';
import { verifySessionToken } from '../../src/identity/verify';
import { keySetFromJwks, parseSigningKey, type CapabilitySigningKey } from '../../src/capability/capability-keys';
import {
  signCapability,
  verifyCapability,
  type CapabilityClaims,
  type CapabilityRequest,
} from '../../src/capability/capability';
import {
  describeProjectKeys,
  ensureProjectKeys,
  issueDevToken,
  keyFilesIn,
  ProjectKeysError,
  retireProjectKey,
  rotateProjectKeys,
  type ProjectKeyFiles,
} from '../../host/project/keys';

let dir: string;
let files: ProjectKeyFiles;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'll-keys-'));
  files = keyFilesIn(path.join(dir, 'keys'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (file: string): number => statSync(file).mode & 0o777;
const read = (file: string): string => readFileSync(file, 'utf8');
const jwksKids = (): string[] => (JSON.parse(read(files.jwks)) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

test('keys creates the signing key, the key set, a dev issuer and codec keys; secrets 0600, public files 0644', async () => {
  const status = await ensureProjectKeys(files);
  expect(status.map((s) => [s.role, s.action])).toEqual([
    ['signingKey', 'created'],
    ['jwks', 'created'],
    ['identityIssuers', 'created'],
    ['devIssuerKey', 'created'],
    ['codecKeys', 'created'],
  ]);
  expect(mode(files.signingKey)).toBe(0o600);
  expect(mode(files.devIssuerKey)).toBe(0o600);
  expect(mode(files.codecKeys)).toBe(0o600);
  expect(mode(files.jwks)).toBe(0o644);
  expect(mode(files.identityIssuers)).toBe(0o644);
  expect(mode(files.dir)).toBe(0o700);
  // The public key set holds exactly the signing key's public half, and no private member.
  const key = parseSigningKey(read(files.signingKey));
  expect(jwksKids()).toEqual([key.kid]);
  expect(read(files.jwks)).not.toMatch(/"d"\s*:/);
  expect(read(files.identityIssuers)).not.toMatch(/"d"\s*:/);
  // A capability signed with the key verifies with the set the services get.
  expect(() => verifiesWithJwks(capability(key))).not.toThrow();
});

test('no listing carries key material: only ids, paths and modes', async () => {
  const status = await ensureProjectKeys(files);
  const listing = JSON.stringify(status);
  const privateD = (JSON.parse(read(files.signingKey)) as { d: string }).d;
  const issuerD = (JSON.parse(read(files.devIssuerKey)) as { privateJwk: { d: string } }).privateJwk.d;
  const codecKey = read(files.codecKeys).trim().split(':')[1]!;
  // Positive control: the secrets are there, in the files.
  expect(privateD.length).toBeGreaterThan(20);
  expect(codecKey.length).toBeGreaterThan(20);
  for (const secret of [privateD, issuerD, codecKey]) expect(listing).not.toContain(secret);
});

test('a second run keeps every existing file as it is', async () => {
  await ensureProjectKeys(files);
  const roles = ['signingKey', 'jwks', 'identityIssuers', 'devIssuerKey', 'codecKeys'] as const;
  const before = roles.map((r) => read(files[r]));
  const status = await ensureProjectKeys(files);
  expect(status.every((s) => s.action === undefined)).toBe(true);
  expect(roles.map((r) => read(files[r]))).toEqual(before);
});

test('rotation makes a new signing key and keeps the old public key trusted until it is retired', async () => {
  await ensureProjectKeys(files);
  const old = parseSigningKey(read(files.signingKey));
  const oldToken = capability(old);
  const status = await rotateProjectKeys(files, 'capability');
  const next = parseSigningKey(read(files.signingKey));
  expect(next.kid).not.toBe(old.kid);
  expect(status.find((s) => s.role === 'signingKey')?.action).toBe('rotated');
  expect(jwksKids()).toEqual([old.kid, next.kid]);
  expect(mode(files.signingKey)).toBe(0o600);
  // A capability signed before the switch still verifies; one signed with the new key too.
  expect(() => verifiesWithJwks(oldToken)).not.toThrow();
  expect(() => verifiesWithJwks(capability(next))).not.toThrow();
  // The key in use cannot be retired; the old one can, and then its capabilities are refused.
  expect(() => retireProjectKey(files, next.kid)).toThrow(ProjectKeysError);
  retireProjectKey(files, old.kid);
  expect(jwksKids()).toEqual([next.kid]);
  expect(() => verifiesWithJwks(capability(old))).toThrow(/kid|key/i);
  expect(() => verifiesWithJwks(capability(next))).not.toThrow();
});

test('a codec rotation adds the active key; payloads written under the old key still decode', async () => {
  await ensureProjectKeys(files);
  const oldRing = parseCodecKeys(read(files.codecKeys).trim());
  const written = await new AesGcmPayloadCodec(oldRing).encode([plainPayload('hello')]);
  await rotateProjectKeys(files, 'codec');
  const ring = parseCodecKeys(read(files.codecKeys).trim());
  expect(ring.keys.size).toBe(2);
  expect(ring.activeKeyId).not.toBe(oldRing.activeKeyId);
  const codec = new AesGcmPayloadCodec(ring);
  const [decoded] = await codec.decode(written);
  expect(Buffer.from(decoded!.data!).toString()).toBe('hello');
  // New payloads are written under the new key.
  const [fresh] = await codec.encode([plainPayload('again')]);
  expect(Buffer.from(fresh!.metadata!['encryption-key-id'] ?? new Uint8Array()).toString()).toBe(ring.activeKeyId);
});

test('a dev token is written 0600, verifies with the issuer file, and still verifies after an issuer rotation', async () => {
  await ensureProjectKeys(files);
  const out = path.join(dir, 'alice.token');
  await issueDevToken(files, { principal: 'user:alice', tenant: 'acme', roles: ['approver'] }, out);
  expect(mode(out)).toBe(0o600);
  const token = read(out).trim();
  const source = () => staticIdentitySource(parseIdentityConfig(JSON.parse(read(files.identityIssuers))));
  const who = await verifySessionToken(source(), token);
  expect(who).toMatchObject({ principalId: 'user:alice', tenant: 'acme', roles: ['approver'] });
  await rotateProjectKeys(files, 'issuer');
  await expect(verifySessionToken(source(), token)).resolves.toMatchObject({ principalId: 'user:alice' });
  // Retiring the old issuer key ends it.
  const oldKid = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;
  retireProjectKey(files, oldKid);
  await expect(verifySessionToken(source(), token)).rejects.toThrow();
});

test('a damaged key file is refused naming the file, without repeating its content', async () => {
  await ensureProjectKeys(files);
  writeFileSync(files.signingKey, '{"kty":"OKP","crv":"Ed25519","d":"c2VjcmV0LXNlY3JldA"}');
  let error: unknown;
  try {
    describeProjectKeys(files);
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(ProjectKeysError);
  expect((error as Error).message).toContain(files.signingKey);
  expect((error as Error).message).not.toContain('c2VjcmV0LXNlY3JldA');
});

test('a token needs the dev issuer first', async () => {
  await expect(issueDevToken(files, { principal: 'user:alice', tenant: 'acme' }, path.join(dir, 't'))).rejects.toThrow(
    /run `ledgerloop keys` first/,
  );
});

function plainPayload(text: string): Payload {
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(text) };
}

const NOW = Date.now();
const GRANT: Omit<CapabilityClaims, 'v'> = {
  operationKey: 'op_abc',
  keyMode: 'exact',
  argumentsHash: 'h1',
  tenant: 'acme',
  principalId: 'user:alice',
  scope: 'booking.book',
  action: 'booking.book',
  resource: 'acme/room/r1',
  policyVersion: 'p/1',
  expiresAt: new Date(NOW + 60_000).toISOString(),
};
const REQUEST: CapabilityRequest = {
  key: 'op_abc',
  argumentsHash: 'h1',
  tenant: 'acme',
  scope: 'booking.book',
  audience: 'booking',
  nowMs: NOW,
};

function capability(key: CapabilitySigningKey): string {
  return signCapability(GRANT, key, { audience: 'booking', nowMs: NOW }).token;
}

/** Verifies `token` with the key set now in jwks.json (a fresh used-token record each time). */
function verifiesWithJwks(token: string): void {
  verifyCapability(token, keySetFromJwks(read(files.jwks)), REQUEST);
}
