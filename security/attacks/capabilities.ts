/**
 * Capabilities at real service processes: a request needs an Ed25519 capability (a compact JWS) signed by a
 * key the service trusts by `kid`, for exactly this service (`aud`), operation key, arguments, tenant and scope,
 * inside its `iat`/`exp` window (30 s skew), and not used before (`jti`). Each attack sends what an attacker
 * could, and reads the effect count from the service's own database.
 */
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { hashCanonical } from '../../src/domain/canonical';
import type { SendOutcome } from '../../src/downstream/client';
import type { AdminClient } from '../../services/admin-client';
import { signCapability, type CapabilityClaims } from '../../src/capability/capability';
import {
  generateCapabilityTrust,
  generateSigningKey,
  KEY_SET_ENV,
  type CapabilitySigningKey,
} from '../../src/capability/capability-keys';
import { spawnedClient, spawnService } from '../../services/spawn';
import type { Attack, AttackGroup, AttackOutcome, Control } from '../attack';

const TENANT = 'acme';
const key = (n: string) => `op_${hashCanonical({ attack: n, at: Date.now(), r: Math.random() }).slice(0, 40)}`;
type Grant = Omit<CapabilityClaims, 'v'>;

function grantFor(operationKey: string, body: unknown, over: Partial<Grant> = {}): Grant {
  return {
    operationKey,
    keyMode: 'exact',
    argumentsHash: hashCanonical(body),
    tenant: TENANT,
    principalId: 'user:mallory',
    scope: 'wallet.charge',
    action: 'wallet.debit',
    resource: `${TENANT}/account/acct_1`,
    policyVersion: 'ledgerloop-default/1',
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
    ...over,
  };
}

export function describeSent(sent: SendOutcome): string {
  switch (sent.kind) {
    case 'ok':
      return `${sent.status} accepted${sent.replayed ? ' (replayed)' : ''}`;
    case 'rejected':
      return `${sent.status} ${sent.code}`;
    default:
      return sent.kind;
  }
}

/** An HS256 token in the new format, naming a trusted kid and "signed" with its public x as the HMAC secret. */
function hmacToken(grant: Grant, kid: string, secret: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${enc({ alg: 'HS256', typ: 'ledgerloop-cap+jwt', kid })}.${enc({ v: 2, iss: 'x', sub: grant.principalId, aud: 'wallet', iat: now, exp: now + 60, jti: `hs-${now}-${Math.random()}`, ...grant })}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/**
 * The target the group attacks. `verifying` (the suite's): services that trust the suite's signing keys.
 * Two broken targets show the suite can fail: `unverified` starts the services without a key set, with
 * `--insecure-dev` (they accept every request: every attack is a breach); `distrusting` gives them another key set
 * (they refuse every capability, the valid ones too: every attack "holds", and every control fails, so every row is
 * VOID). Without keys and without that flag a service refuses to start.
 */
export type CapabilityTarget = 'verifying' | 'unverified' | 'distrusting';

export const capabilityAttacksOn = (opts: { readonly target: CapabilityTarget }): AttackGroup => ({
  name: opts.target === 'verifying' ? 'capabilities' : `capabilities-${opts.target}`,
  async setup({ dir }) {
    const trust = generateCapabilityTrust();
    const env =
      opts.target === 'verifying'
        ? { ...trust.serviceEnv }
        : opts.target === 'distrusting'
          ? { ...generateCapabilityTrust().serviceEnv }
          : { [KEY_SET_ENV]: '' };
    // Without keys a service refuses to start; only the explicit development flag runs it unverified.
    const extraArgs = opts.target === 'unverified' ? ['--insecure-dev'] : [];
    const [wallet, notifications] = await Promise.all([
      spawnService('wallet', { dbPath: path.join(dir, 'wallet.db'), env, extraArgs }),
      spawnService('notifications', { dbPath: path.join(dir, 'notifications.db'), env, extraArgs }),
    ]);
    // No signer: every request carries exactly the capability the attack chose. Admin routes with the token.
    const client = spawnedClient(wallet);
    const mail = spawnedClient(notifications);
    await client.seedAccount({ tenant: TENANT, account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
    const body = (minor: number) => ({ tenant: TENANT, account: 'acct_1', amount: { minor, currency: 'EUR' } });
    const sign = (g: Grant, k: CapabilitySigningKey = trust.dispatch, audience = 'wallet', nowMs = Date.now()) =>
      signCapability(g, k, { audience, nowMs }).token;

    /** Send a request under `opKey` with `capability`; the outcome is a refusal when nothing was accepted. */
    const attemptAt = async (
      target: AdminClient,
      route: string,
      opKey: string,
      b: unknown,
      capability: string | undefined,
    ): Promise<AttackOutcome> => {
      const sent = await target.send(route, b, {
        key: opKey,
        argumentsHash: hashCanonical(b),
        intentAt: new Date().toISOString(),
        ...(capability ? { capability } : {}),
      });
      const effects = (await target.stats(opKey)).businessEffectCount;
      return {
        observed: describeSent(sent),
        refused: sent.kind === 'rejected' && sent.status === 403 && sent.code === 'Capability.Invalid',
        effects,
      };
    };
    const attempt = (opKey: string, b: unknown, capability: string | undefined) =>
      attemptAt(client, '/v1/debits', opKey, b, capability);

    /** The request made as it should be: accepted, with exactly its one effect. */
    const acceptedOnce = async (sent: AttackOutcome): Promise<{ observed: string; accepted: boolean }> => ({
      observed: `${sent.observed}, ${sent.effects} effect(s)`,
      accepted: /accepted/.test(sent.observed) && sent.effects === 1,
    });
    const validDebit: Control = {
      name: 'a valid capability for a 1.00 EUR debit',
      expected: 'accepted, 1 effect',
      run: () => {
        const k = key('control');
        return attempt(k, body(100), sign(grantFor(k, body(100)))).then(acceptedOnce);
      },
    };
    const email = { tenant: TENANT, to: 'victim@example.com', template: 'account-notice', vars: {} };
    const emailGrant = (k: string, principalId: string): Grant =>
      grantFor(k, email, {
        scope: 'notifications.email',
        action: 'notifications.send_email',
        resource: `${TENANT}/email/victim`,
        principalId,
      });
    const validEmail: Control = {
      name: "the dispatch key's capability for an email send",
      expected: 'accepted, 1 effect',
      run: () => {
        const k = key('email-control');
        return attemptAt(
          mail,
          '/v1/emails',
          k,
          email,
          sign(emailGrant(k, 'user:alice'), trust.dispatch, 'notifications'),
        ).then(acceptedOnce);
      },
    };

    const attacks: Attack[] = [
      {
        name: 'a debit with no capability',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => attempt(key('none'), body(100), undefined),
      },
      {
        name: "a capability replayed against another call's key",
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => attempt(key('other'), body(100), sign(grantFor(key('granted'), body(100)))),
      },
      {
        name: 'a capability replayed with other arguments (a larger amount)',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('args');
          return attempt(k, body(99_999), sign(grantFor(k, body(100))));
        },
      },
      {
        name: 'a capability for another service (aud inventory) sent to the wallet',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('aud');
          return attempt(k, body(100), sign(grantFor(k, body(100)), trust.dispatch, 'inventory'));
        },
      },
      {
        name: 'a capability replayed after its expiry (beyond the 30 s skew)',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('expired');
          const issued = Date.now() - 120_000;
          return attempt(
            k,
            body(100),
            sign(
              grantFor(k, body(100), { expiresAt: new Date(Date.now() - 45_000).toISOString() }),
              trust.dispatch,
              'wallet',
              issued,
            ),
          );
        },
      },
      {
        name: 'a capability issued in the future (beyond the skew)',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('future');
          return attempt(
            k,
            body(100),
            sign(
              grantFor(k, body(100), { expiresAt: new Date(Date.now() + 180_000).toISOString() }),
              trust.dispatch,
              'wallet',
              Date.now() + 120_000,
            ),
          );
        },
      },
      {
        name: 'one capability used twice for the same call (single use)',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: async () => {
          const k = key('twice');
          const token = sign(grantFor(k, body(100)));
          await attempt(k, body(100), token); // the legitimate use: its one effect is not the attack's
          const before = (await client.stats(k)).businessEffectCount;
          const replay = await attempt(k, body(100), token);
          return { ...replay, effects: replay.effects - before };
        },
      },
      {
        name: 'a blind-retry (derived-key) capability replayed under a fresh key: a second charge',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: async () => {
          const k = key('derived');
          const token = sign(grantFor(k, body(100), { keyMode: 'derived' }));
          await attempt(`${k}~a1`, body(100), token); // the legitimate use
          return attempt(`${k}~a2`, body(100), token);
        },
      },
      {
        name: 'a capability for another tenant',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('tenant');
          return attempt(k, body(100), sign(grantFor(k, body(100), { tenant: 'globex' })));
        },
      },
      {
        name: 'a capability signed with a key the wallet does not trust, under a trusted kid (forged)',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('forged');
          return attempt(k, body(100), sign(grantFor(k, body(100)), generateSigningKey(trust.dispatch.kid)));
        },
      },
      {
        name: 'an HMAC (HS256) capability naming a trusted kid',
        expected: '403 Capability.Invalid',
        control: validDebit,
        run: () => {
          const k = key('hmac');
          return attempt(
            k,
            body(100),
            hmacToken(grantFor(k, body(100)), trust.dispatch.kid, trust.dispatch.publicJwk.x),
          );
        },
      },
      {
        name: "the outbox relay's key used for another scope (an email send)",
        expected: '403 Capability.Invalid',
        control: validEmail,
        run: () => {
          const k = key('relay-scope');
          return attemptAt(
            mail,
            '/v1/emails',
            k,
            email,
            sign(emailGrant(k, 'service:orders-relay'), trust.relay, 'notifications'),
          );
        },
      },
    ];
    return { attacks, teardown: () => Promise.all([wallet.stop(), notifications.stop()]).then(() => undefined) };
  },
});

export const capabilityAttacks = capabilityAttacksOn({ target: 'verifying' });
