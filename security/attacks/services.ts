/**
 * Fail-closed services, attacked at real wallet processes: admin and fault routes reached from outside loopback,
 * without the admin token, or on the public listener; a production start asked for faults; lookup and seal
 * without a capability, by GET, and across tenants; a service started without its keys. Effects are read from the
 * wallet's own records (stats with the admin token, a lookup with a valid capability, the public balance route).
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { hashCanonical } from '../../src/domain/canonical';
import { lookupCapabilityScope, LOOKUP_ARGUMENTS_HASH } from '../../src/downstream/protocol';
import { CAPABILITY_HEADER, signCapability, type CapabilityClaims } from '../../src/capability/capability';
import {
  generateCapabilityTrust,
  generateSigningKey,
  KEY_SET_ENV,
  RELAY_SIGNING_KEY_ENV,
} from '../../src/capability/capability-keys';
import { devCapabilitySigner } from '../../services/dev-signer';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import type { Attack, AttackGroup, AttackOutcome, Control, ControlOutcome } from '../attack';

const ACME = 'acme';
const GLOBEX = 'globex';

/** A raw HTTP answer: status and typed error code (or the transport error). */
interface Answer {
  readonly status: number;
  readonly code: string;
  readonly body: Record<string, unknown>;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, { ...init, redirect: 'manual' });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: response.status, code: typeof body['error'] === 'string' ? body['error'] : '', body };
}

/** The first non-loopback IPv4 address of this machine, if it has one (never a remote host). */
function ownExternalAddress(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** Tries a TCP+HTTP request to `host:port`; resolves with the HTTP status or the socket error code. */
function probe(host: string, port: number, pathname: string): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: pathname, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/**
 * The non-loopback check, on any admin URL: the probe of `<this machine's other address>:<admin port>` must be
 * refused by the bind (ECONNREFUSED). Its control shows that a refusal there means something: the same port
 * answers HTTP on 127.0.0.1 (a dead port refuses both), and a listener on all interfaces answers on that address
 * (the address is reachable at all). Exported so a test can point it at a dead port and see it VOID.
 */
export function adminOutsideLoopback(
  adminUrl: string,
  boundAddress: () => string | undefined,
  effects: () => Promise<number>,
): Attack {
  const adminPort = Number(new URL(adminUrl).port);
  const external = ownExternalAddress();
  const reachable: Control = {
    name: 'the admin port answers on 127.0.0.1, and a listener on all interfaces answers on this address',
    expected: 'an HTTP status on both',
    async run(): Promise<ControlOutcome> {
      const loopback = await probe('127.0.0.1', adminPort, '/admin/stats?key=x');
      if (external === undefined)
        return {
          observed: `127.0.0.1:${adminPort} -> ${loopback}; no other interface`,
          accepted: /^\d+$/.test(loopback),
        };
      const open = http.createServer((_req, res) => res.end('ok'));
      await new Promise<void>((resolve) => open.listen(0, '0.0.0.0', resolve));
      const port = (open.address() as { port: number }).port;
      const there = await probe(external, port, '/').finally(() => open.close());
      return {
        observed: `127.0.0.1:${adminPort} -> ${loopback}; ${external}:${port} (all interfaces) -> ${there}`,
        accepted: /^\d+$/.test(loopback) && /^\d+$/.test(there),
      };
    },
  };
  return {
    name: 'the admin listener reached from a non-loopback address',
    expected: 'connection refused (bound to 127.0.0.1 only)',
    control: reachable,
    async run() {
      if (external === undefined) {
        // No other interface here: the bind itself is the check, as the process reported it.
        const bound = boundAddress() ?? '';
        return {
          observed: `no non-loopback interface; admin bound to ${bound}`,
          refused: bound === '127.0.0.1',
          effects: await effects(),
        };
      }
      const got = await probe(external, adminPort, '/admin/stats?key=x');
      return {
        observed: `${external}:${adminPort} -> ${got}`,
        refused: got === 'ECONNREFUSED',
        effects: await effects(),
      };
    },
  };
}

/** Starts a process that must start (a control), then stops it. */
async function startsAndStops(start: () => Promise<SpawnedService>): Promise<ControlOutcome> {
  try {
    const started = await start();
    await started.stop();
    return { observed: `started at ${started.url}`, accepted: true };
  } catch (err) {
    return { observed: (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '', accepted: false };
  }
}

/** Starts a process that must refuse to start: a refusal is `Service.KeysMissing` on its way out. */
async function refusedStart(start: () => Promise<SpawnedService>): Promise<AttackOutcome> {
  try {
    const started = await start();
    await started.stop();
    return { observed: `started at ${started.url}`, refused: false, effects: 1 };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const refused = /Service\.KeysMissing/.test(message);
    return { observed: refused ? 'exit 1 Service.KeysMissing' : (message.split('\n')[0] ?? ''), refused, effects: 0 };
  }
}

export const serviceAttacks: AttackGroup = {
  name: 'services',
  async setup({ dir }) {
    const trust = generateCapabilityTrust();
    const capabilityKey = trust.dispatch;
    const env = { ...trust.serviceEnv };
    const started: SpawnedService[] = [];
    const wallet = await spawnService('wallet', { dbPath: path.join(dir, 'wallet.db'), env });
    started.push(wallet);
    // A production start: an admin listener for evidence, but no --lab, so no fault injector exists.
    const prod = await spawnService('wallet', { dbPath: path.join(dir, 'wallet-prod.db'), env, lab: false });
    started.push(prod);
    const client = spawnedClient(wallet, { capabilityKey });
    const sign = devCapabilitySigner(capabilityKey, 'wallet');
    const lookupCap = (key: string, tenant: string, seal = false): string =>
      sign({
        kind: seal ? 'seal' : 'lookup',
        path: `/v1/operations/${key}`,
        key,
        argumentsHash: LOOKUP_ARGUMENTS_HASH,
        tenant,
      }) ?? '';

    await client.seedAccount({ tenant: ACME, account: 'acct_1', balanceMinor: 1_000_000, currency: 'EUR' });
    // One real debit of acme's, under a key another tenant will ask about.
    const sharedKey = `op_${hashCanonical({ shared: Date.now() }).slice(0, 40)}`;
    const debit = { tenant: ACME, account: 'acct_1', amount: { minor: 100, currency: 'EUR' } };
    const sent = await client.send('/v1/debits', debit, { key: sharedKey, intentAt: new Date().toISOString() });
    if (sent.kind !== 'ok') throw new Error(`setup debit failed: ${JSON.stringify(sent)}`);
    const baseline = async (): Promise<number> => (await client.stats('', { prefix: true })).businessEffectCount;
    const effectsBefore = await baseline();
    /** New business effects since setup, plus whether an unseeded account now exists (an admin write). */
    const effects = async (account?: string): Promise<number> => {
      const seeded = account === undefined ? undefined : await client.balance(ACME, account);
      return (await baseline()) - effectsBefore + (seeded === undefined ? 0 : 1);
    };
    /** Whether `key` is sealed for acme (read with a valid capability). */
    const sealedForAcme = async (key: string): Promise<number> => {
      const found = await client.lookup(key, { tenant: ACME });
      return found.kind === 'not_found' && found.sealed ? 1 : 0;
    };
    const freshKey = (n: string) => `op_${hashCanonical({ n, at: Date.now() }).slice(0, 40)}`;

    // The controls: each request made as it should be, on the same processes.
    const adminWith: Control = {
      name: 'the admin listener, from loopback, with its token',
      expected: '200',
      async run() {
        const a = await call(`${wallet.adminUrl}/admin/stats?key=x`, {
          headers: { authorization: `Bearer ${wallet.adminToken ?? ''}` },
        });
        return { observed: `${a.status}`, accepted: a.status === 200 };
      },
    };
    const labFault: Control = {
      name: 'a fault armed on a lab start, with its admin token',
      expected: '201, then cleared',
      async run() {
        const auth = { authorization: `Bearer ${wallet.adminToken ?? ''}` };
        const a = await call(`${wallet.adminUrl}/admin/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ at: 'after_commit', do: 'drop_response', path: '/v1/none' }),
        });
        const cleared = await call(`${wallet.adminUrl}/admin/faults`, { method: 'DELETE', headers: auth });
        return {
          observed: `${a.status}; cleared ${cleared.status}`,
          accepted: a.status === 201 && cleared.status < 300,
        };
      },
    };
    const validLookup: Control = {
      name: "acme's lookup of its own key, with its capability",
      expected: '200, the record',
      async run() {
        const a = await call(`${wallet.url}/v1/operations/${sharedKey}?tenant=${ACME}`, {
          headers: { [CAPABILITY_HEADER]: lookupCap(sharedKey, ACME) },
        });
        return { observed: `${a.status} receipt=${String(a.body['receipt'] ?? '-')}`, accepted: a.status === 200 };
      },
    };
    const validSeal: Control = {
      name: 'a seal by POST with a seal capability',
      expected: '404 not_found, sealed',
      async run() {
        const key = freshKey('seal-control');
        const a = await call(`${wallet.url}/v1/operations/${key}/seal`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CAPABILITY_HEADER]: lookupCap(key, ACME, true) },
          body: JSON.stringify({ tenant: ACME }),
        });
        return {
          observed: `${a.status} sealed=${String(a.body['sealed'])}`,
          accepted: (await sealedForAcme(key)) === 1,
        };
      },
    };
    const startsWithKeys: Control = {
      name: 'a wallet started with its verification keys',
      expected: 'starts',
      run: () => startsAndStops(() => spawnService('wallet', { dbPath: path.join(dir, 'withkey.db'), env })),
    };
    const relayWithKey: Control = {
      name: 'an outbox relay started with its signing key',
      expected: 'starts',
      run: () =>
        startsAndStops(() =>
          spawnService('orders-relay', {
            dbPath: path.join(dir, 'relay-withkey.db'),
            env: { ...trust.relayEnv },
            extraArgs: ['--target', wallet.url],
          }),
        ),
    };

    const adminWithout = (name: string, p: string, init: RequestInit, account?: string): Attack => ({
      name,
      expected: '401 Admin.Unauthorized',
      control: adminWith,
      async run(): Promise<AttackOutcome> {
        const a = await call(`${wallet.adminUrl}${p}`, init);
        return {
          observed: `${a.status} ${a.code}`,
          refused: a.status === 401 && a.code === 'Admin.Unauthorized',
          effects: await effects(account),
        };
      },
    });

    const attacks: Attack[] = [
      adminWithout(
        'seed an account on the admin listener without the token',
        '/admin/accounts',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ tenant: ACME, account: 'acct_mallory', balanceMinor: 9_999_999, currency: 'EUR' }),
        },
        'acct_mallory',
      ),
      adminWithout('arm a fault on the admin listener with a wrong token', '/admin/faults', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${'x'.repeat(43)}` },
        body: JSON.stringify({ at: 'after_commit', do: 'drop_response' }),
      }),
      {
        name: 'admin and fault routes on the public listener',
        expected: '404 Route.NotFound',
        control: adminWith,
        async run() {
          const seed = await call(`${wallet.url}/admin/accounts`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${wallet.adminToken ?? ''}` },
            body: JSON.stringify({ tenant: ACME, account: 'acct_public', balanceMinor: 1, currency: 'EUR' }),
          });
          const fault = await call(`${wallet.url}/admin/faults`, {
            method: 'POST',
            body: '{"at":"before_commit","do":"error_5xx"}',
          });
          const refused = [seed, fault].every((a) => a.status === 404 && a.code === 'Route.NotFound');
          return {
            observed: `${seed.status} ${seed.code}; ${fault.status} ${fault.code}`,
            refused,
            effects: await effects('acct_public'),
          };
        },
      },
      adminOutsideLoopback(
        wallet.adminUrl ?? 'http://127.0.0.1:0',
        () => wallet.adminBoundAddress,
        () => effects(),
      ),
      {
        name: 'a fault armed on a production start (no --lab), with the admin token',
        expected: '404 Route.NotFound (no fault injector exists)',
        control: labFault,
        async run() {
          const a = await call(`${prod.adminUrl}/admin/faults`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${prod.adminToken ?? ''}` },
            body: JSON.stringify({ at: 'after_commit', do: 'drop_response' }),
          });
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 404 && a.code === 'Route.NotFound',
            effects: await effects(),
          };
        },
      },
      {
        name: 'a lookup without a capability',
        expected: '403 Capability.Invalid',
        control: validLookup,
        async run() {
          const a = await call(`${wallet.url}/v1/operations/${sharedKey}?tenant=${ACME}`);
          const leaked = a.body['receipt'] !== undefined ? 1 : 0;
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 403 && a.code === 'Capability.Invalid',
            effects: (await effects()) + leaked,
          };
        },
      },
      {
        name: 'a seal without a capability',
        expected: '403 Capability.Invalid',
        control: validSeal,
        async run() {
          const key = freshKey('seal-nocap');
          const a = await call(`${wallet.url}/v1/operations/${key}/seal`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ tenant: ACME }),
          });
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 403 && a.code === 'Capability.Invalid',
            effects: (await effects()) + (await sealedForAcme(key)),
          };
        },
      },
      {
        name: 'a seal by GET (?seal=true), even with a seal capability',
        expected: '405 Lookup.SealRequiresPost',
        control: validSeal,
        async run() {
          const key = freshKey('seal-get');
          const a = await call(`${wallet.url}/v1/operations/${key}?seal=true&tenant=${ACME}`, {
            headers: { [CAPABILITY_HEADER]: lookupCap(key, ACME, true) },
          });
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 405 && a.code === 'Lookup.SealRequiresPost',
            effects: (await effects()) + (await sealedForAcme(key)),
          };
        },
      },
      {
        name: "a lookup of acme's key by globex (with globex's own valid capability)",
        expected: "404 not_found (no other tenant's record)",
        control: validLookup,
        async run() {
          const a = await call(`${wallet.url}/v1/operations/${sharedKey}?tenant=${GLOBEX}`, {
            headers: { [CAPABILITY_HEADER]: lookupCap(sharedKey, GLOBEX) },
          });
          const leaked = a.body['receipt'] !== undefined ? 1 : 0;
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 404 && a.code === 'not_found' && leaked === 0,
            effects: (await effects()) + leaked,
          };
        },
      },
      {
        name: "acme's lookup capability presented for globex",
        expected: '403 Capability.Invalid',
        control: validLookup,
        async run() {
          const a = await call(`${wallet.url}/v1/operations/${sharedKey}?tenant=${GLOBEX}`, {
            headers: { [CAPABILITY_HEADER]: lookupCap(sharedKey, ACME) },
          });
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 403 && a.code === 'Capability.Invalid',
            effects: await effects(),
          };
        },
      },
      {
        name: "a seal of acme's settled key by globex (its own valid seal capability)",
        expected: "globex's seal only: acme's record stays completed",
        control: validLookup,
        async run() {
          const a = await call(`${wallet.url}/v1/operations/${sharedKey}/seal`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', [CAPABILITY_HEADER]: lookupCap(sharedKey, GLOBEX, true) },
            body: JSON.stringify({ tenant: GLOBEX }),
          });
          const acme = await client.lookup(sharedKey, { tenant: ACME });
          const intact = acme.kind === 'found' && acme.record.status === 'completed';
          return {
            observed: `${a.status} ${a.code} sealed=${String(a.body['sealed'])}; acme: ${acme.kind}`,
            refused: a.status === 404 && intact,
            effects: (await effects()) + (intact ? 0 : 1),
          };
        },
      },
      {
        name: 'a capability forged for a lookup (signed with another key)',
        expected: '403 Capability.Invalid',
        control: validLookup,
        async run() {
          const claims: Omit<CapabilityClaims, 'v'> = {
            operationKey: sharedKey,
            keyMode: 'exact',
            argumentsHash: LOOKUP_ARGUMENTS_HASH,
            tenant: ACME,
            principalId: 'user:mallory',
            scope: lookupCapabilityScope('wallet', false),
            action: 'lookup',
            resource: 'wallet',
            policyVersion: 'x',
            expiresAt: new Date(Date.now() + 60_000).toISOString(),
          };
          const a = await call(`${wallet.url}/v1/operations/${sharedKey}?tenant=${ACME}`, {
            // Another private key under the trusted kid: only the signature can tell.
            headers: {
              [CAPABILITY_HEADER]: signCapability(claims, generateSigningKey(capabilityKey.kid), {
                audience: 'wallet',
                nowMs: Date.now(),
              }).token,
            },
          });
          return {
            observed: `${a.status} ${a.code}`,
            refused: a.status === 403 && a.code === 'Capability.Invalid',
            effects: await effects(),
          };
        },
      },
      {
        name: 'a service started without its verification keys',
        expected: 'no start: Service.KeysMissing',
        control: startsWithKeys,
        run: () =>
          refusedStart(() =>
            spawnService('wallet', { dbPath: path.join(dir, 'nokey.db'), env: { [KEY_SET_ENV]: '' } }),
          ),
      },
      {
        name: 'an outbox relay started without its signing key',
        expected: 'no start: Service.KeysMissing',
        control: relayWithKey,
        run: () =>
          refusedStart(() =>
            spawnService('orders-relay', {
              dbPath: path.join(dir, 'relay-nokey.db'),
              env: { [RELAY_SIGNING_KEY_ENV]: '' },
              extraArgs: ['--target', wallet.url],
            }),
          ),
      },
    ];
    return { attacks, teardown: async () => void (await Promise.all(started.map((p) => p.stop()))) };
  },
};
