/**
 * Capabilities at a real wallet process: a debit needs a capability signed for exactly that operation key,
 * arguments, tenant and scope, still valid, and signed by a key the wallet trusts. Each attack sends one debit
 * the way an attacker could, and reads the effect count from the wallet's own database.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { hashCanonical } from '../../src/domain/canonical';
import type { SendOutcome } from '../../src/downstream/client';
import { signCapability, type CapabilityClaims } from '../../src/policy/capability';
import { spawnedClient, spawnService } from '../../src/services/spawn';
import type { Attack, AttackGroup, AttackOutcome } from '../attack';

const TENANT = 'acme';
const key = (n: string) => `op_${hashCanonical({ attack: n, at: Date.now() }).slice(0, 40)}`;

function claimsFor(operationKey: string, body: unknown, over: Partial<CapabilityClaims> = {}): CapabilityClaims {
  return {
    v: 1,
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

function describe(sent: SendOutcome): string {
  switch (sent.kind) {
    case 'ok':
      return `${sent.status} accepted`;
    case 'rejected':
      return `${sent.status} ${sent.code}`;
    default:
      return sent.kind;
  }
}

/**
 * `verifying: false` starts the wallet without its verification key, with `--insecure-dev` (the way the suite shows
 * it can fail: such a wallet accepts every debit, and every attack becomes a breach).
 */
export const capabilityAttacksOn = (opts: { readonly verifying: boolean }): AttackGroup => ({
  name: opts.verifying ? 'capabilities' : 'capabilities-unverified',
  async setup({ dir }) {
    const trusted = randomBytes(32);
    const wallet = await spawnService('wallet', {
      dbPath: path.join(dir, 'wallet.db'),
      env: opts.verifying ? { LEDGERLOOP_CAPABILITY_KEY: trusted.toString('base64') } : { LEDGERLOOP_CAPABILITY_KEY: '' },
      // Without a key a wallet refuses to start; only the explicit development flag runs it unverified.
      ...(opts.verifying ? {} : { extraArgs: ['--insecure-dev'] }),
    });
    // No signer: every request carries exactly the capability the attack chose. Admin routes with the token.
    const client = spawnedClient(wallet);
    await client.seedAccount({ tenant: TENANT, account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
    const body = (minor: number) => ({ tenant: TENANT, account: 'acct_1', amount: { minor, currency: 'EUR' } });

    /** Send a debit under `opKey` with `capability`; the outcome is a refusal when nothing was accepted. */
    const attempt = async (opKey: string, b: unknown, capability: string | undefined): Promise<AttackOutcome> => {
      const sent = await client.send('/v1/debits', b, { key: opKey, argumentsHash: hashCanonical(b), intentAt: new Date().toISOString(), ...(capability ? { capability } : {}) });
      const effects = (await client.stats(opKey)).businessEffectCount;
      return { observed: describe(sent), refused: sent.kind === 'rejected' && sent.status === 403 && sent.code === 'Capability.Invalid', effects };
    };

    const attacks: Attack[] = [
      {
        name: 'a debit with no capability',
        expected: '403 Capability.Invalid',
        run: () => attempt(key('none'), body(100), undefined),
      },
      {
        name: "a capability replayed against another call's key",
        expected: '403 Capability.Invalid',
        run: () => {
          const granted = key('granted');
          return attempt(key('other'), body(100), signCapability(claimsFor(granted, body(100)), trusted));
        },
      },
      {
        name: 'a capability replayed with other arguments (a larger amount)',
        expected: '403 Capability.Invalid',
        run: () => {
          const k = key('args');
          return attempt(k, body(99_999), signCapability(claimsFor(k, body(100)), trusted));
        },
      },
      {
        name: 'a capability replayed after its expiry',
        expected: '403 Capability.Invalid',
        run: () => {
          const k = key('expired');
          return attempt(k, body(100), signCapability(claimsFor(k, body(100), { expiresAt: new Date(Date.now() - 1_000).toISOString() }), trusted));
        },
      },
      {
        name: 'a capability for another tenant',
        expected: '403 Capability.Invalid',
        run: () => {
          const k = key('tenant');
          return attempt(k, body(100), signCapability(claimsFor(k, body(100), { tenant: 'globex' }), trusted));
        },
      },
      {
        name: 'a capability signed with a key the wallet does not trust (forged)',
        expected: '403 Capability.Invalid',
        run: () => {
          const k = key('forged');
          return attempt(k, body(100), signCapability(claimsFor(k, body(100)), randomBytes(32)));
        },
      },
    ];
    return { attacks, teardown: () => wallet.stop() };
  },
});

export const capabilityAttacks = capabilityAttacksOn({ verifying: true });
