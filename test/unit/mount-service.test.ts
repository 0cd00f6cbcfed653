/**
 * `mountService` (ledgerloop/services): a user's own `http.Server` serves a service definition with the whole
 * contract. Fail closed: no verification keys, no service.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import BetterSqlite3 from 'better-sqlite3';
import { keySetFromJwks, mountService } from '../../services';
import { hashCanonical } from '../../src/domain/canonical';
import { generateSigningKey, jwksJson, publicJwkOf } from '../../src/capability/capability-keys';
import { ticketingService } from '../../examples/ticketing/src/service/ticketing-service';

test('a service without verification keys is refused (Service.KeysMissing)', () => {
  const db = new BetterSqlite3(':memory:');
  try {
    expect(() => mountService(ticketingService, { db })).toThrow(/no capability verification keys/);
  } finally {
    db.close();
  }
});

test("mounted on the user's own server: the standard routes, and a mutation without a capability is 403", async () => {
  const db = new BetterSqlite3(':memory:');
  const keys = keySetFromJwks(jwksJson([publicJwkOf(generateSigningKey())]));
  const mounted = mountService(ticketingService, { db, capabilityKeys: keys });
  expect(mounted.adminRouter).toBeUndefined(); // no admin routes unless asked for
  const server = http.createServer((req, res) => void mounted.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    expect(await (await fetch(`${url}/v1/contract`)).json()).toEqual({
      service: 'ticketing',
      idempotencyRetentionMs: 86_400_000,
    });
    const body = { tenant: 'acme', project: 'ops', title: 't', labels: [] };
    const send = (argumentsHash: string) =>
      fetch(`${url}/v1/tickets`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': 'op_1',
          'x-arguments-hash': argumentsHash,
          'x-intent-at': new Date().toISOString(),
        },
        body: JSON.stringify(body),
      });
    const wrongHash = await send('a'.repeat(64));
    expect(wrongHash.status).toBe(400);
    expect(await wrongHash.json()).toMatchObject({ error: 'Request.ArgumentsHashInvalid', committed: false });
    const noCapability = await send(hashCanonical(body));
    expect(noCapability.status).toBe(403);
    expect(await noCapability.json()).toMatchObject({ error: 'Capability.Invalid', committed: false });
    expect(mounted.runtime.store.refusals().byCode).toEqual({
      'Request.ArgumentsHashInvalid': 1,
      'Capability.Invalid': 1,
    });
    expect(mounted.runtime.store.stats('op_1')).toMatchObject({ dispatchCount: 0, businessEffectCount: 0 });
  } finally {
    await new Promise((resolve) => server.close(resolve));
    db.close();
  }
});
