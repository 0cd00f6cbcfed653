/**
 * The token a client sends for one act: the given one when it names exactly that act, run and call; else one
 * minted from a verified session token with the development issuer's key; else a refusal before anything is sent.
 * And a sign-in (the console's) takes a session token, never an act's.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { decodeJwt } from 'jose';
import { ActTokenError, DEV_ISSUER_KEY_ENV, tokenForAct } from '../../src/identity/act-token';
import { staticIdentitySource } from '../../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import type { TokenScope } from '../../src/identity/purpose';
import { verifyIdentityToken, verifySessionToken } from '../../src/identity/verify';

let dev: DevIssuer;
let stranger: DevIssuer;
beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'act-token-'));
  dev = await createDevIssuer(path.join(dir, 'dev'));
  stranger = await createDevIssuer(path.join(dir, 'stranger'));
});

const APPROVE: TokenScope = { purpose: 'approve', run: 'acme:run-1', call: 'lc_1' };
const withKey = () => ({ [DEV_ISSUER_KEY_ENV]: dev.keyPath });

test('a token for exactly the act is sent as it is, with or without the key', async () => {
  const exact = await dev.issueFor(APPROVE, 'manager:carol', 'acme', ['approver']);
  expect(await tokenForAct(exact, APPROVE, {})).toEqual({ token: exact, minted: false });
  expect(await tokenForAct(exact, APPROVE, withKey())).toEqual({ token: exact, minted: false });
});

test('a session token is traded for a token for the act that the workers accept, carrying who it names', async () => {
  const session = await dev.issue('manager:carol', 'acme', ['approver'], { ttlSec: 12 * 3600 });
  const { token, minted } = await tokenForAct(session, APPROVE, withKey());
  expect(minted).toBe(true);
  expect(decodeJwt(token)).toMatchObject({ purpose: 'approve', run: 'acme:run-1', call: 'lc_1', sub: 'manager:carol' });
  expect(await verifyIdentityToken(staticIdentitySource([dev.config]), token, APPROVE)).toMatchObject({
    principalId: 'manager:carol',
    roles: ['approver'],
  });
});

test.each([
  [
    'a session token without the key',
    async () => dev.issue('manager:carol', 'acme'),
    () => ({}),
    /names no act.*Ask your identity provider/,
  ],
  [
    'an act token for another run, even with the key (only a session is traded)',
    async () => dev.issueFor({ ...APPROVE, run: 'acme:run-2' }, 'manager:carol', 'acme'),
    withKey,
    /only a session token is exchanged/,
  ],
  [
    'a session token of another issuer, with the key',
    async () => stranger.issue('manager:carol', 'acme'),
    withKey,
    /not a valid session token of the development issuer/,
  ],
  ['not a JWT', async () => 'hello', withKey, /not a JWT/],
  [
    'a key file that is not one',
    async () => dev.issue('manager:carol', 'acme'),
    () => ({ [DEV_ISSUER_KEY_ENV]: dev.configPath }),
    /not a development issuer key file/,
  ],
])('refused before sending: %s', async (_name, token, env, why) => {
  await expect(tokenForAct(await token(), APPROVE, env())).rejects.toThrow(ActTokenError);
  await expect(tokenForAct(await token(), APPROVE, env())).rejects.toThrow(why);
});

test('a sign-in takes a session token and refuses an act token (and the reverse)', async () => {
  const source = staticIdentitySource([dev.config]);
  const session = await dev.issue('ops:bob', 'acme', ['operator']);
  const act = await dev.issueFor(APPROVE, 'ops:bob', 'acme', ['operator']);
  expect(await verifySessionToken(source, session)).toMatchObject({ principalId: 'ops:bob' });
  await expect(verifySessionToken(source, act)).rejects.toThrow(
    /a sign-in needs a session token; this one is for approve/,
  );
  await expect(verifyIdentityToken(source, session, APPROVE)).rejects.toThrow(/names no act/);
});
