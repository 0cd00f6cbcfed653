/**
 * The services kit's HTTP behaviour (services/http-kit.ts), through a small service started in process with
 * `startService`: the body limit (declared or counted, and the refusal still reaches the client), bodies that
 * are empty or not JSON, typed 404/405, a handler's `HttpError` (committed: false) against an unknown failure
 * (a 500 that promises nothing), the loopback admin listener's token, and a lab fault that drops the response
 * after the commit.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { hashCanonical } from '../../src/domain/canonical';
import { HttpError, json, mutation, startService, type RunningService, type ServiceDefinition } from '../../services';
import { Id } from '../../services/body-schemas';
import { DEFAULT_BODY_LIMIT_BYTES } from '../../services/http-kit';

const ADMIN_TOKEN = 'a'.repeat(40);

const notes: ServiceDefinition = {
  name: 'notes',
  migrate: (db: Database) => db.exec('CREATE TABLE IF NOT EXISTS notes (tenant TEXT, key TEXT, text TEXT)'),
  mutations: {
    '/v1/notes': mutation({
      scope: 'notes.write',
      schema: z.strictObject({ tenant: Id, text: z.string() }),
      apply: (db, body, key) => {
        db.prepare('INSERT INTO notes (tenant, key, text) VALUES (?, ?, ?)').run(body.tenant, key, body.text);
        return { receipt: `r_${key}`, result: { receipt: `r_${key}` } };
      },
    }),
  },
  routes: (router) =>
    router
      .on('GET', '/v1/refuse', () => {
        throw new HttpError(409, 'Notes.Busy', 'try later', { retryAfterMs: 5 });
      })
      .on('GET', '/v1/crash', () => {
        throw new Error('boom');
      }),
  adminRoutes: (router, runtime) =>
    router.on('GET', '/admin/count', () => {
      const row = runtime.db.prepare('SELECT count(*) AS n FROM notes').get() as { n: number };
      return json(200, row);
    }),
};

let dir: string;
let service: RunningService;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-http-kit-'));
  service = await startService(notes, {
    dbPath: path.join(dir, 'notes.db'),
    insecureDev: true,
    admin: { port: 0, token: ADMIN_TOKEN, lab: true },
  });
});
afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly json: unknown;
  readonly reusedSocket: boolean;
}

/** One request on `agent`; `chunked` sends the body without Content-Length, so a limit is found by counting. */
function request(
  url: string,
  opts: { method?: string; body?: string; chunked?: boolean; headers?: Record<string, string>; agent?: http.Agent },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers ?? {}, ...(opts.agent ? { agent: opts.agent } : {}) },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown, reusedSocket: req.reusedSocket }),
        );
      },
    );
    req.on('error', reject);
    if (opts.chunked && opts.body !== undefined) {
      req.setHeader('transfer-encoding', 'chunked');
      for (let i = 0; i < opts.body.length; i += 4096) req.write(opts.body.slice(i, i + 4096));
      req.end();
    } else {
      req.end(opts.body);
    }
  });
}

function mutationHeaders(body: unknown, key: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'idempotency-key': key,
    'x-arguments-hash': hashCanonical(body),
    'x-intent-at': new Date().toISOString(),
  };
}

describe('the body limit', () => {
  const big = JSON.stringify({ tenant: 't', text: 'x'.repeat(DEFAULT_BODY_LIMIT_BYTES) });

  test.each([
    ['declared in Content-Length', false],
    ['counted while reading (chunked)', true],
  ])('a body over the limit, %s, is 413 Request.TooLarge and the connection still answers', async (_, chunked) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await request(`${service.url}/v1/notes`, {
        method: 'POST',
        body: big,
        chunked,
        headers: mutationHeaders(JSON.parse(big), `big-${String(chunked)}`),
        agent,
      });
      expect(refused.status).toBe(413);
      expect(refused.json).toMatchObject({ error: 'Request.TooLarge', committed: false });
      const next = await request(`${service.url}/health`, { agent });
      expect(next).toMatchObject({ status: 200, json: { service: 'notes', status: 'ok' } });
    } finally {
      agent.destroy();
    }
  });

  test('the control: a body within the limit commits', async () => {
    const body = { tenant: 't', text: 'x'.repeat(1000) };
    const answer = await request(`${service.url}/v1/notes`, {
      method: 'POST',
      body: JSON.stringify(body),
      chunked: true,
      headers: mutationHeaders(body, 'small'),
    });
    expect(answer).toMatchObject({ status: 201, json: { receipt: 'r_small' } });
  });
});

test.each([
  ['empty', '  ', /request body is empty/],
  ['not JSON', '{"a":', /request body is not valid JSON/],
])('a body that is %s is 400 Request.Invalid, nothing recorded', async (_, body, message) => {
  const answer = await request(`${service.url}/v1/notes`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'idempotency-key': 'k-bad' },
  });
  expect(answer.status).toBe(400);
  expect(answer.json).toMatchObject({ error: 'Request.Invalid', committed: false });
  expect((answer.json as { message: string }).message).toMatch(message);
});

test('an unknown path is 404 Route.NotFound; a known path with another method is 405 Route.MethodNotAllowed', async () => {
  expect(await request(`${service.url}/v1/nothing`, {})).toMatchObject({
    status: 404,
    json: { error: 'Route.NotFound', committed: false },
  });
  expect(await request(`${service.url}/v1/notes`, {})).toMatchObject({
    status: 405,
    json: { error: 'Route.MethodNotAllowed', committed: false },
  });
});

test("a handler's HttpError is its typed answer (committed: false); an unknown failure is a 500 that promises nothing", async () => {
  expect(await request(`${service.url}/v1/refuse`, {})).toMatchObject({
    status: 409,
    json: { error: 'Notes.Busy', message: 'try later', retryAfterMs: 5, committed: false },
  });
  const crash = await request(`${service.url}/v1/crash`, {});
  expect(crash).toMatchObject({ status: 500, json: { error: 'Service.Internal', message: 'boom' } });
  expect(crash.json).not.toHaveProperty('committed');
});

describe('the admin listener', () => {
  test('answers only with the admin token (401 Admin.Unauthorized otherwise), on 127.0.0.1', async () => {
    expect(service.adminBoundAddress).toBe('127.0.0.1');
    const without = await request(`${service.adminUrl!}/admin/count`, {});
    expect(without).toMatchObject({ status: 401, json: { error: 'Admin.Unauthorized', committed: false } });
    const wrong = await request(`${service.adminUrl!}/admin/count`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const right = await request(`${service.adminUrl!}/admin/count`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(right).toMatchObject({ status: 200, json: { n: expect.any(Number) } });
  });

  test('the public listener serves no admin route', async () => {
    expect((await request(`${service.url}/admin/count`, {})).status).toBe(404);
  });
});

test('a lab fault drops the response after the commit: the client sees the connection end, the effect is there once', async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const rule = { at: 'after_commit', do: 'drop_response', path: '/v1/notes' };
  const armed = await request(`${service.adminUrl!}/admin/faults`, {
    method: 'POST',
    body: JSON.stringify(rule),
    headers: admin,
  });
  expect(armed.status).toBe(201);
  const body = { tenant: 't', text: 'dropped' };
  await expect(
    request(`${service.url}/v1/notes`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: mutationHeaders(body, 'drop-1'),
    }),
  ).rejects.toThrow(/socket hang up|ECONNRESET/);
  const stats = await request(`${service.adminUrl!}/admin/stats?key=drop-1`, { headers: admin });
  expect(stats).toMatchObject({ status: 200, json: { businessEffectCount: 1 } });
  // The retry under the same key is answered with the retained result, and no second effect.
  const again = await request(`${service.url}/v1/notes`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: mutationHeaders(body, 'drop-1'),
  });
  expect(again).toMatchObject({ status: 201, json: { receipt: 'r_drop-1' } });
});
