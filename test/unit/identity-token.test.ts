/** Identity tokens: what the verifier accepts and what it refuses, with the typed code of each refusal. */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import {
  identitySourceFromEnv,
  loadIdentityConfig,
  parseIdentityConfig,
  staticIdentitySource,
  type IssuerConfig,
} from '../../src/identity/config';
import { createDevIssuer, issueIdentityToken, newIssuerKey, readToken, type DevIssuer } from '../../src/identity/issue';
import type { TokenScope } from '../../src/identity/purpose';
import { tokenDigest, verifyIdentityToken } from '../../src/identity/verify';

/** The act every token here is minted and verified for (token purposes: test/unit/token-purpose.test.ts). */
const START: TokenScope = { purpose: 'start', run: 'acme:run-1' };
const APPROVE: TokenScope = { purpose: 'approve', run: 'acme:run-1', call: 'lc_1' };

let dev: DevIssuer;
let other: DevIssuer;
beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'identity-unit-'));
  dev = await createDevIssuer(path.join(dir, 'a'));
  other = await createDevIssuer(path.join(dir, 'b'));
});

const source = () => staticIdentitySource([dev.config]);
const refusal = async (token: unknown, src = source()) =>
  verifyIdentityToken(src, token, START).then(
    () => 'accepted',
    (e: { type: string; message: string }) => `${e.type}: ${e.message}`,
  );

test('a token of the configured issuer maps to its principal, tenant and roles, with the token digest', async () => {
  const token = await dev.issueFor(APPROVE, 'manager:carol', 'acme', ['approver']);
  const v = await verifyIdentityToken(source(), token, APPROVE);
  expect(v).toMatchObject({
    subject: 'manager:carol',
    principalId: 'manager:carol',
    tenant: 'acme',
    roles: ['approver'],
    issuer: dev.config.issuer,
  });
  expect(v.tokenDigest).toBe(tokenDigest(token));
  expect(JSON.stringify(v)).not.toContain(token);
});

test.each([
  ['no token', async () => undefined, /Identity.Invalid: no identity token/],
  ['not a JWS', async () => 'hello', /Identity.Invalid/],
  [
    'forged (another key, same kid)',
    async () =>
      issueIdentityToken(
        { subject: 'user:alice', principal: 'user:alice', tenant: 'acme', ...START },
        { ...other.options, kid: dev.options.kid },
      ),
    /signature does not verify/,
  ],
  ['unknown kid', async () => other.issueFor(START, 'user:alice', 'acme'), /Identity.Invalid/],
  [
    'expired',
    async () =>
      dev.issueFor(START, 'user:alice', 'acme', [], { iatSec: Math.floor(Date.now() / 1000) - 3_600, ttlSec: 60 }),
    /expired/,
  ],
  ['wrong audience', async () => dev.issueFor(START, 'user:alice', 'acme', [], { audience: 'elsewhere' }), /aud/],
  [
    'lifetime beyond the issuer maximum',
    async () => dev.issueFor(START, 'user:alice', 'acme', [], { ttlSec: 2 * 86_400 }),
    /valid longer/,
  ],
])('refused: %s', async (_name, make, why) => {
  expect(await refusal(await make())).toMatch(why);
});

test('with subject mapping, an unlisted subject is refused (Identity.Unmapped) and a listed one maps', async () => {
  const { publicJwk, privateJwk } = await newIssuerKey('k1');
  const issuer = parseIdentityConfig({
    issuer: 'https://id.example',
    audience: 'ledgerloop',
    jwks: { keys: [publicJwk] },
    subjects: { alice: { principal: 'user:alice', tenant: 'acme' } },
  })[0] as IssuerConfig;
  const opts = { issuer: issuer.issuer, audience: issuer.audience, kid: 'k1', privateJwk };
  const src = staticIdentitySource([issuer]);
  expect(
    await verifyIdentityToken(src, await issueIdentityToken({ subject: 'alice', ...START }, opts), START),
  ).toMatchObject({
    principalId: 'user:alice',
    tenant: 'acme',
    roles: [],
  });
  // Claims in the token do not count under subject mapping.
  expect(
    await refusal(
      await issueIdentityToken({ subject: 'mallory', principal: 'user:alice', tenant: 'acme', ...START }, opts),
      src,
    ),
  ).toMatch(/Identity.Unmapped/);
});

test('fail closed: no configuration, an unreadable file, or a key set holding a private key', async () => {
  const token = await dev.issueFor(START, 'user:alice', 'acme');
  expect(await refusal(token, identitySourceFromEnv({}))).toMatch(/Identity.Unconfigured/);
  expect(
    await refusal(token, identitySourceFromEnv({ LEDGERLOOP_IDENTITY_ISSUERS: '/nonexistent/issuers.json' })),
  ).toMatch(/Identity.Unconfigured/);
  const { privateJwk } = await newIssuerKey('k');
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'issuers-')), 'i.json');
  writeFileSync(file, JSON.stringify({ issuer: 'x', audience: 'y', jwks: { keys: [privateJwk] } }));
  expect(() => loadIdentityConfig(file)).toThrow(/private key/);
  expect(loadIdentityConfig(dev.configPath)[0]!.issuer).toBe(dev.config.issuer);
});

test('the CLI reads a token from --token, from @file, or from the environment', () => {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'tok-')), 't');
  writeFileSync(file, 'a.b.c\n');
  expect(readToken('x.y.z', {}, 'V')).toBe('x.y.z');
  expect(readToken(`@${file}`, {}, 'V')).toBe('a.b.c');
  expect(readToken(undefined, { V: 'e.n.v' }, 'V')).toBe('e.n.v');
  expect(readToken(undefined, {}, 'V')).toBeUndefined();
});
