/**
 * Every read is scoped, at real wallet and orders processes: `GET /v1/accounts/globex/acct_1` (a balance) and
 * `GET /v1/orders/globex/o-77` (a customer's email) answer only with a read capability for exactly that record
 * and tenant (services/read-capability.ts). An attack's "effect" is a leak: the record's data in the response.
 * Controls: globex's own read capability for the record is served, with the data.
 *
 * `target: 'unverified'` starts the services with `--insecure-dev` and no keys: they serve every read, and every
 * attack becomes a breach (how the suite shows this group can fail).
 */
import path from 'node:path';
import { READ_ARGUMENTS_HASH, LOOKUP_ARGUMENTS_HASH } from '../../src/downstream/protocol';
import { generateCapabilityTrust, KEY_SET_ENV } from '../../src/capability/capability-keys';
import { CAPABILITY_HEADER } from '../../src/capability/capability';
import { devCapabilitySigner } from '../../services/dev-signer';
import { spawnedClient, spawnService } from '../../services/spawn';
import type { Attack, AttackGroup, AttackOutcome, Control } from '../attack';

const BALANCE = '/v1/accounts/globex/acct_1';
const ORDER = '/v1/orders/globex/o-77';
const EMAIL = 'cfo@globex.example';

export const readAttacksOn = (opts: { readonly target: 'scoped' | 'unverified' }): AttackGroup => ({
  name: opts.target === 'scoped' ? 'reads' : 'reads-unverified',
  async setup({ dir }) {
    const trust = generateCapabilityTrust();
    const env = opts.target === 'scoped' ? { ...trust.serviceEnv } : { [KEY_SET_ENV]: '' };
    const extraArgs = opts.target === 'scoped' ? [] : ['--insecure-dev'];
    const [wallet, orders] = await Promise.all([
      spawnService('wallet', { dbPath: path.join(dir, 'wallet.db'), env, extraArgs }),
      spawnService('orders', { dbPath: path.join(dir, 'orders.db'), env, extraArgs }),
    ]);
    // Seeded on the admin listeners (loopback, admin token): globex's balance and its customer's email.
    await spawnedClient(wallet).seedAccount({
      tenant: 'globex',
      account: 'acct_1',
      balanceMinor: 987_654,
      currency: 'EUR',
    });
    await spawnedClient(orders).request('POST', '/admin/orders', {
      tenant: 'globex',
      orderId: 'o-77',
      customerEmail: EMAIL,
    });
    const secret: Record<string, { url: string; leaked: (text: string) => boolean; service: string }> = {
      [BALANCE]: { url: wallet.url, leaked: (t) => t.includes('987654'), service: 'wallet' },
      [ORDER]: { url: orders.url, leaked: (t) => t.includes(EMAIL), service: 'orders' },
    };
    /** A capability of the suite's trusted key for `record` (as a read, or as a lookup: another scope). */
    const cap = (record: string, tenant: string, kind: 'read' | 'lookup' = 'read', forPath = record): string =>
      devCapabilitySigner(
        trust.dispatch,
        secret[record]!.service,
      )({
        kind,
        path: forPath,
        key: forPath,
        argumentsHash: kind === 'read' ? READ_ARGUMENTS_HASH : LOOKUP_ARGUMENTS_HASH,
        tenant,
      })!;
    const get = async (record: string, capability?: string, at = record) => {
      const res = await fetch(`${secret[record]!.url}${at}`, {
        headers: capability ? { [CAPABILITY_HEADER]: capability } : {},
      });
      const text = await res.text();
      let code = '';
      try {
        code = String((JSON.parse(text) as { error?: unknown }).error ?? '');
      } catch {
        // not JSON
      }
      return { status: res.status, code, leaked: secret[record]!.leaked(text) };
    };
    const served = (record: string): Control => ({
      name: `globex's read capability for exactly ${record}`,
      expected: '200, the record',
      async run() {
        const r = await get(record, cap(record, 'globex'));
        return {
          observed: `${r.status}${r.leaked ? ', the record' : ', no record'}`,
          accepted: r.status === 200 && r.leaked,
        };
      },
    });
    const balanceRead = served(BALANCE);
    const orderRead = served(ORDER);
    const refusedRead = (
      name: string,
      record: string,
      control: Control,
      capability: () => string | undefined,
      expected = { status: 403, code: 'Capability.Invalid' },
      at = record,
    ): Attack => ({
      name,
      expected: `${expected.status} ${expected.code}, nothing read`,
      control,
      async run(): Promise<AttackOutcome> {
        const r = await get(record, capability(), at);
        return {
          observed: `${r.status} ${r.code || '-'}${r.leaked ? ', the record leaked' : ''}`,
          refused: r.status === expected.status && r.code === expected.code && !r.leaked,
          effects: r.leaked ? 1 : 0,
        };
      },
    });
    const attacks: Attack[] = [
      refusedRead(`GET ${BALANCE} with no capability`, BALANCE, balanceRead, () => undefined),
      refusedRead(`GET ${BALANCE} with acme's read capability for its own account`, BALANCE, balanceRead, () =>
        cap(BALANCE, 'acme', 'read', '/v1/accounts/acme/acct_1'),
      ),
      refusedRead(`GET ${BALANCE} with a read capability for that path naming tenant acme`, BALANCE, balanceRead, () =>
        cap(BALANCE, 'acme'),
      ),
      refusedRead(`GET ${BALANCE} with globex's lookup capability (another scope)`, BALANCE, balanceRead, () =>
        cap(BALANCE, 'globex', 'lookup'),
      ),
      {
        name: `globex's read capability for ${BALANCE}, replayed`,
        expected: '403 Capability.Invalid, nothing read',
        control: balanceRead,
        async run() {
          const once = cap(BALANCE, 'globex');
          await get(BALANCE, once); // its one legitimate use
          const r = await get(BALANCE, once);
          return {
            observed: `${r.status} ${r.code || '-'}${r.leaked ? ', the record leaked' : ''}`,
            refused: r.status === 403 && r.code === 'Capability.Invalid' && !r.leaked,
            effects: r.leaked ? 1 : 0,
          };
        },
      },
      refusedRead(`GET ${ORDER} with no capability`, ORDER, orderRead, () => undefined),
      refusedRead(`GET ${ORDER} with acme's read capability for an acme order`, ORDER, orderRead, () =>
        cap(ORDER, 'acme', 'read', '/v1/orders/acme/o-77'),
      ),
      refusedRead(
        `GET /admin${BALANCE} on the public listener`,
        BALANCE,
        balanceRead,
        () => undefined,
        { status: 404, code: 'Route.NotFound' },
        `/admin${BALANCE}`,
      ),
    ];
    return { attacks, teardown: () => Promise.all([wallet.stop(), orders.stop()]).then(() => undefined) };
  },
});

export const readAttacks = readAttacksOn({ target: 'scoped' });
