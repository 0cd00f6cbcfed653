/**
 * The services kit on the team's own PostgreSQL (services/pg), on a private real PostgreSQL: the effect (a row in
 * the team's own `refunds` table) and its key row commit in one transaction, the fence is checked inside it, and
 * lookup and seal read and write the same table. Every count is read from PostgreSQL's own `refunds` table.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { Pool } from 'pg';
import { hashCanonical } from '../../src/domain/canonical';
import {
  DownstreamErrorCode,
  HEADER_ARGS_HASH,
  HEADER_FENCE,
  HEADER_INTENT_AT,
  HEADER_KEY,
  HEADER_REPLAYED,
} from '../../src/downstream/protocol';
import { BusinessRejection } from '../../services/business-rejection';
import {
  expressOperation,
  expressOperationRoutes,
  type ExpressResponse,
  type OperationLocals,
} from '../../services/pg/express';
import { FaultInjector } from '../../services/faults';
import { labAdminApp } from '../../services/pg/lab-admin';
import { operationMiddleware, operationRoutes, type OperationEnv } from '../../services/pg/middleware';
import { PgOperations, type Operation } from '../../services/pg/operations';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres';

jest.setTimeout(120_000);

let pg: TestPostgres;
let pool: Pool;
const open: PgOperations[] = [];

function operations(): PgOperations {
  const ops = new PgOperations({ url: pg.url, setting: 'TEST_URL' });
  open.push(ops);
  return ops;
}

beforeAll(async () => {
  pg = await startTestPostgres('pg-operation');
  pool = new Pool({ connectionString: pg.url, max: 2 });
  await pool.query(
    'CREATE TABLE refunds (id SERIAL PRIMARY KEY, order_id TEXT NOT NULL, amount_minor INTEGER NOT NULL)',
  );
});
afterAll(async () => {
  await Promise.all(open.map((o) => o.close().catch(() => undefined)));
  await pool?.end();
  await pg?.stop();
});

let n = 0;
const unique = (): string => `op_${Date.now().toString(36)}_${(n += 1)}`;

/** The refunds PostgreSQL holds for `order` (the downstream's own storage). */
async function refunds(order: string): Promise<number> {
  const r = await pool.query<{ n: string }>('SELECT count(*) AS n FROM refunds WHERE order_id = $1', [order]);
  return Number(r.rows[0]!.n);
}

function op(key: string, fence: number, order: string, at = Date.now()): Operation {
  return {
    tenant: 't1',
    key,
    argumentsHash: hashCanonical({ order }),
    fence,
    scope: 'shop.refund',
    intentAtMs: at,
  };
}

const refund = (order: string) => async (tx: import('pg').PoolClient) => {
  await tx.query('INSERT INTO refunds (order_id, amount_minor) VALUES ($1, 500)', [order]);
  return { receipt: `refund:${order}`, result: { order, refunded: 500 } };
};

describe('the effect and its key row commit in one transaction', () => {
  test('a lost response after the commit is answered from the key row on the resend: one effect in PostgreSQL', async () => {
    const ops = operations();
    const order = unique();
    const key = unique();
    const first = await ops.withOperation(op(key, 1, order), refund(order)); // its answer is "lost"
    expect(first.kind).toBe('completed');
    for (let i = 0; i < 3; i++) {
      const again = await ops.withOperation(op(key, 1, order), refund(order));
      expect(again).toMatchObject({ kind: 'replayed', record: { receipt: `refund:${order}` } });
    }
    expect(await refunds(order)).toBe(1);
    // The control: another key for the same order is another refund (the count can grow).
    await ops.withOperation(op(unique(), 1, order), refund(order));
    expect(await refunds(order)).toBe(2);
  });

  test('two requests under one key at once: the second waits on the row lock and replays, one effect', async () => {
    const ops = operations();
    const order = unique();
    const key = unique();
    const outs = await Promise.all([1, 2].map(() => ops.withOperation(op(key, 1, order), refund(order))));
    expect(outs.map((o) => o.kind).sort()).toEqual(['completed', 'replayed']);
    expect(await refunds(order)).toBe(1);
  });

  test('a throw inside the work rolls back both the effect and the key row: the resend then commits once', async () => {
    const ops = operations();
    const order = unique();
    const key = unique();
    await expect(
      ops.withOperation(op(key, 1, order), async (tx) => {
        await refund(order)(tx);
        throw new Error('the process died before the commit');
      }),
    ).rejects.toThrow('died');
    expect(await refunds(order)).toBe(0);
    expect(await ops.lookup('t1', key)).toEqual({ kind: 'not_found', sealed: false });
    expect((await ops.withOperation(op(key, 1, order), refund(order))).kind).toBe('completed');
    expect(await refunds(order)).toBe(1);
  });

  test('a restart of the service: a new process replays the committed key and counts one effect', async () => {
    const order = unique();
    const key = unique();
    const before = new PgOperations({ url: pg.url, setting: 'TEST_URL' });
    expect((await before.withOperation(op(key, 1, order), refund(order))).kind).toBe('completed');
    await before.close();
    const after = operations();
    expect((await after.withOperation(op(key, 1, order), refund(order))).kind).toBe('replayed');
    expect(await refunds(order)).toBe(1);
  });

  test('a business rejection rolls the effect back and is retained under the key', async () => {
    const ops = operations();
    const order = unique();
    const key = unique();
    const reject = async (tx: import('pg').PoolClient) => {
      await refund(order)(tx);
      throw new BusinessRejection('Shop.AlreadyRefunded', 'the order was refunded already');
    };
    expect((await ops.withOperation(op(key, 1, order), reject)).kind).toBe('failed');
    expect((await ops.withOperation(op(key, 1, order), refund(order))).kind).toBe('retained_failure');
    expect(await refunds(order)).toBe(0);
  });
});

describe('the fence is checked inside the transaction', () => {
  test('a stale fence waiting on the row lock is refused after the newer holder commits; its work never runs', async () => {
    const ops = operations();
    const order = unique();
    const key = unique();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    // The newer worker (fence 2) holds the key row's transaction open...
    const newer = ops.withOperation(op(key, 2, order), async (tx) => {
      entered();
      await held;
      return refund(order)(tx);
    });
    await inside;
    // ...while the fenced-out worker (fence 1) sends under the same key: it waits for the row, then is refused.
    let staleRan = false;
    const stale = ops.withOperation(op(key, 1, order), async (tx) => {
      staleRan = true;
      return refund(order)(tx);
    });
    release();
    expect((await newer).kind).toBe('completed');
    expect(await stale).toMatchObject({ kind: 'conflict', code: DownstreamErrorCode.StaleFence });
    expect(staleRan).toBe(false);
    expect(await refunds(order)).toBe(1);
    // The control: the current fence replays the same key (not refused), still one refund.
    expect((await ops.withOperation(op(key, 2, order), refund(order))).kind).toBe('replayed');
    expect(await refunds(order)).toBe(1);
  });

  test('a sealed key never commits afterwards; an unsealed one does', async () => {
    const ops = operations();
    const order = unique();
    const sealed = unique();
    expect(await ops.lookup('t1', sealed, { seal: true })).toEqual({ kind: 'not_found', sealed: true });
    expect(await ops.withOperation(op(sealed, 9, order), refund(order))).toMatchObject({
      kind: 'conflict',
      code: DownstreamErrorCode.KeySealed,
    });
    expect(await refunds(order)).toBe(0);
    const open = unique();
    expect((await ops.withOperation(op(open, 1, order), refund(order))).kind).toBe('completed');
    expect(await ops.lookup('t1', open, { seal: true })).toMatchObject({ kind: 'found' });
    expect(await refunds(order)).toBe(1);
  });

  test('an intent older than the retention is refused before any row; a fresh one is admitted', async () => {
    const ops = operations();
    const order = unique();
    const key = unique();
    const old = await ops.withOperation(op(key, 1, order, Date.now() - ops.retentionMs - 1), refund(order));
    expect(old).toMatchObject({ kind: 'refused', code: DownstreamErrorCode.IntentExpired });
    expect(await ops.lookup('t1', key)).toEqual({ kind: 'not_found', sealed: false });
    expect((await ops.withOperation(op(key, 1, order), refund(order))).kind).toBe('completed');
  });
});

describe('the Hono middleware on a service the team already has', () => {
  function app(ops: PgOperations): Hono<OperationEnv> {
    const a = new Hono<OperationEnv>();
    a.post('/refunds', operationMiddleware(ops, { service: 'shop', scope: 'shop.refund', insecureDev: true }), (c) => {
      const body = c.var.operationBody as { order: string };
      return c.var.runOperation(refund(body.order));
    });
    a.route('/', operationRoutes(ops, { service: 'shop', insecureDev: true }));
    return a;
  }
  function post(a: Hono<OperationEnv>, key: string, body: unknown, hash = hashCanonical(body)): Promise<Response> {
    return Promise.resolve(
      a.request('/refunds', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [HEADER_KEY]: key,
          [HEADER_ARGS_HASH]: hash,
          [HEADER_FENCE]: '1',
          [HEADER_INTENT_AT]: new Date().toISOString(),
        },
        body: JSON.stringify(body),
      }),
    );
  }

  test('a resend replays the answer, the lookup finds the key, and a body that does not match its hash is refused', async () => {
    const a = app(operations());
    const order = unique();
    const key = unique();
    const body = { tenant: 't1', order };
    expect((await post(a, key, body)).status).toBe(201);
    const again = await post(a, key, body);
    expect(again.status).toBe(201);
    expect(again.headers.get(HEADER_REPLAYED)).toBe('true');
    const found = await a.request(`/v1/operations/${key}?tenant=t1`);
    expect(found.status).toBe(200);
    expect(await found.json()).toMatchObject({ operationKey: key, status: 'completed', receipt: `refund:${order}` });
    const forged = await post(a, unique(), { tenant: 't1', order: unique() }, hashCanonical({ other: 1 }));
    expect(forged.status).toBe(400);
    expect(await refunds(order)).toBe(1);
  });

  test('a lab fault after the commit loses the answer of a committed effect, one before it commits nothing; the admin app counts and lists them', async () => {
    const ops = operations();
    const faults = new FaultInjector();
    const a = new Hono<OperationEnv>();
    const lab = { service: 'shop', scope: 'shop.refund', insecureDev: true, faults } as const;
    a.post('/refunds', operationMiddleware(ops, lab), (c) =>
      c.var.runOperation(refund((c.var.operationBody as { order: string }).order)),
    );
    const order = unique();
    const token = 'a'.repeat(32);
    const stats = async () => ({ dispatchCount: 0, businessEffectCount: await refunds(order) });
    const admin = labAdminApp({ token, faults, stats });
    const asAdmin = (path: string, init: RequestInit = {}) =>
      Promise.resolve(
        admin.request(path, {
          ...init,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        }),
      );
    const body = { tenant: 't1', order };
    const arm = (rule: unknown) => asAdmin('/admin/faults', { method: 'POST', body: JSON.stringify(rule) });
    expect((await arm({ at: 'before_commit', do: 'error_5xx', path: '/refunds' })).status).toBe(201);
    expect((await post(a, unique(), body)).status).toBe(503);
    expect(await refunds(order)).toBe(0);
    expect((await arm({ at: 'after_commit', do: 'error_5xx', path: '/refunds' })).status).toBe(201);
    const key = unique();
    expect((await post(a, key, body)).status).toBe(502);
    expect(await refunds(order)).toBe(1);
    expect(await ops.lookup('t1', key)).toMatchObject({ kind: 'found' });
    expect(await (await asAdmin('/admin/stats')).json()).toEqual({ dispatchCount: 0, businessEffectCount: 1 });
    const rules = (await (await asAdmin('/admin/faults')).json()) as { rules: { fired: number }[] };
    expect(rules.rules.map((r) => r.fired)).toEqual([1, 1]);
    // The control: with the rules spent, the same kind of request is answered (and a third refund counted).
    expect((await post(a, unique(), body)).status).toBe(201);
    expect(await refunds(order)).toBe(2);
    // No token, no admin route; a weak token builds no admin app.
    expect((await admin.request('/admin/stats')).status).toBe(401);
    expect(() => labAdminApp({ token: 'short', stats })).toThrow(/at least 32/);
    // Without an injector (a production start) the fault routes do not exist.
    const plain = labAdminApp({ token, stats });
    expect(
      (await plain.request('/admin/faults', { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(404);
  });

  test('without capability keys the middleware is not built unless insecureDev says so (fail closed)', () => {
    const ops = operations();
    expect(() => operationMiddleware(ops, { service: 'shop', scope: 's' } as never)).toThrow(/capabilityKeys/);
    expect(() => operationRoutes(ops, { service: 'shop' } as never)).toThrow(/capabilityKeys/);
    expect(() => operationMiddleware(ops, { service: 'shop', scope: 's', insecureDev: true })).not.toThrow();
  });
});

// express ships no types and @types/express is not installed (it is here as a dependency of a dependency): the few
// calls this test makes, typed here. The kit itself imports nothing of Express.
interface ExpressApp {
  use(...handlers: unknown[]): void;
  post(path: string, ...handlers: unknown[]): void;
  listen(port: number, host: string, ready: () => void): Server;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express = require('express') as { (): ExpressApp; json(): unknown };

describe('the Express middleware on a service the team already has', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const ops = operations();
    const a = express();
    const handler = (_req: unknown, res: ExpressResponse) => {
      const locals = res.locals as unknown as OperationLocals;
      return locals.runOperation(refund((locals.operationBody as { order: string }).order));
    };
    const mw = expressOperation(ops, { service: 'shop', scope: 'shop.refund', insecureDev: true });
    a.post('/refunds', express.json(), mw, handler); // a body Express parsed
    a.post('/refunds-raw', mw, handler); // no parser: the middleware reads the JSON itself
    a.use(express.json(), expressOperationRoutes(ops, { service: 'shop', insecureDev: true }));
    await new Promise<void>((r) => (server = a.listen(0, '127.0.0.1', r)));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  function post(route: string, key: string, body: unknown, hash = hashCanonical(body)): Promise<Response> {
    return fetch(`${base}${route}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [HEADER_KEY]: key,
        [HEADER_ARGS_HASH]: hash,
        [HEADER_FENCE]: '1',
        [HEADER_INTENT_AT]: new Date().toISOString(),
      },
      body: JSON.stringify(body),
    });
  }

  test('on Express, parsed or not: a resend replays the answer from the key row, and a body that does not match its hash is refused', async () => {
    for (const route of ['/refunds', '/refunds-raw']) {
      const order = unique();
      const key = unique();
      const body = { tenant: 't1', order };
      expect((await post(route, key, body)).status).toBe(201);
      const again = await post(route, key, body);
      expect(again.status).toBe(201);
      expect(again.headers.get(HEADER_REPLAYED)).toBe('true');
      expect(await again.json()).toMatchObject({ order, refunded: 500 });
      const forged = await post(route, unique(), { tenant: 't1', order }, hashCanonical({ other: 1 }));
      expect(forged.status).toBe(400);
      expect(await forged.json()).toMatchObject({ error: DownstreamErrorCode.ArgumentsHashInvalid });
      expect(await refunds(order)).toBe(1);
    }
  });

  test('on Express, the lookup finds the key row and the seal seals a missing key, which then refuses its request', async () => {
    const order = unique();
    const key = unique();
    expect((await post('/refunds', key, { tenant: 't1', order })).status).toBe(201);
    const found = await fetch(`${base}/v1/operations/${key}?tenant=t1`);
    expect(found.status).toBe(200);
    expect(await found.json()).toMatchObject({ operationKey: key, status: 'completed', receipt: `refund:${order}` });
    const missing = unique();
    const sealed = await fetch(`${base}/v1/operations/${missing}/seal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 't1' }),
    });
    expect(sealed.status).toBe(404);
    expect(await sealed.json()).toMatchObject({ sealed: true });
    const late = await post('/refunds', missing, { tenant: 't1', order: unique() });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: DownstreamErrorCode.KeySealed });
  });

  test('without capability keys the Express middleware is not built unless insecureDev says so (fail closed)', () => {
    const ops = operations();
    expect(() => expressOperation(ops, { service: 'shop', scope: 's' } as never)).toThrow(/capabilityKeys/);
    expect(() => expressOperationRoutes(ops, { service: 'shop' } as never)).toThrow(/capabilityKeys/);
    expect(() => expressOperation(ops, { service: 'shop', scope: 's', insecureDev: true })).not.toThrow();
  });
});
