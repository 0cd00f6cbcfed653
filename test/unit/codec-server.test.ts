import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import {
  CodecServerConfigError,
  payloadToJson,
  startCodecServer,
  type CodecServer,
  type CodecServerOptions,
  type JsonPayload,
} from '../../host/codec/codec-server';
import { parseCodecKeys } from '../../src/codec/data-converter';
import { codecAuthFromEnv, serveCodecFromEnv } from '../../host/codec/serve';

const KEY_ID = 'kid-secret-ring-7';
const TOKEN = randomBytes(24).toString('hex');
const UI = 'http://localhost:8233';
const aes = new AesGcmPayloadCodec(parseCodecKeys(`${KEY_ID}:${randomBytes(32).toString('base64')}`));

/** Counts what reaches the codec: a refused request must never get here. */
class CountingCodec implements PayloadCodec {
  decoded = 0;
  encoded = 0;
  async encode(p: Payload[]): Promise<Payload[]> {
    this.encoded += p.length;
    return aes.encode(p);
  }
  async decode(p: Payload[]): Promise<Payload[]> {
    this.decoded += p.length;
    return aes.decode(p);
  }
}

const servers: CodecServer[] = [];
async function serve(opts: Partial<CodecServerOptions> = {}): Promise<{ server: CodecServer; codec: CountingCodec }> {
  const codec = new CountingCodec();
  const server = await startCodecServer({ codec, auth: { kind: 'bearer', tokens: [TOKEN] }, ...opts });
  servers.push(server);
  return { server, codec };
}
afterAll(() => Promise.all(servers.map((s) => s.close())));

const auth = { Authorization: `Bearer ${TOKEN}` };
async function post(
  server: CodecServer,
  route: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}

/** fetch() will not let a test set Host: send a raw request instead. */
function rawRequest(
  server: CodecServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function encrypted(value: unknown): Promise<JsonPayload> {
  const [p] = await aes.encode([defaultPayloadConverter.toPayload(value)]);
  return payloadToJson(p!);
}

test('POST /decode with the bearer token returns the plaintext in the UI JSON shape', async () => {
  const { server } = await serve();
  const res = await post(server, '/decode', { payloads: [await encrypted({ account: 'acct_9' })] }, auth);
  expect(res.status).toBe(200);
  const dec = (await res.json()) as { payloads: JsonPayload[] };
  expect(JSON.parse(Buffer.from(dec.payloads[0]!.data!, 'base64').toString())).toEqual({ account: 'acct_9' });
});

test('a missing or wrong token is refused with 401 and the payload is not decoded', async () => {
  const { server, codec } = await serve();
  const body = { payloads: [await encrypted({ account: 'acct_9' })] };
  for (const headers of [
    {} as Record<string, string>,
    { Authorization: 'Bearer wrong-token-wrong-token-wrong-token' },
    { Authorization: TOKEN },
    { Authorization: `Basic ${TOKEN}` },
  ]) {
    const res = await post(server, '/decode', body, headers);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await res.json()) as { type: string }).type).toBe('Codec.Unauthenticated');
  }
  expect(codec.decoded).toBe(0);
});

test('during a rotation both configured tokens are accepted', async () => {
  const other = randomBytes(24).toString('hex');
  const { server } = await serve({ auth: { kind: 'bearer', tokens: [TOKEN, other] } });
  for (const t of [TOKEN, other]) {
    expect((await post(server, '/decode', { payloads: [] }, { Authorization: `Bearer ${t}` })).status).toBe(200);
  }
});

test('a cross-origin POST is refused (403) before its body is read, even with the token, and nothing is decoded', async () => {
  const { server, codec } = await serve();
  const body = { payloads: [await encrypted({ account: 'acct_9' })] };
  const res = await post(server, '/decode', body, { ...auth, Origin: 'http://evil.example' });
  expect(res.status).toBe(403);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  const json = (await res.json()) as { type: string; payloads?: unknown };
  expect(json.type).toBe('Codec.OriginRefused');
  expect(json.payloads).toBeUndefined();
  expect(codec.decoded).toBe(0);
  // The allowed UI origin with the token is served.
  expect((await post(server, '/decode', body, { ...auth, Origin: UI })).status).toBe(200);
  expect(codec.decoded).toBe(1);
});

test('CORS preflight: the UI origin is granted Authorization, another origin is refused', async () => {
  const { server } = await serve();
  const ok = await fetch(`${server.url}/decode`, {
    method: 'OPTIONS',
    headers: {
      Origin: UI,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization,content-type,x-namespace',
    },
  });
  expect(ok.status).toBe(204);
  expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
  expect(ok.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
  expect(ok.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/);
  expect(ok.headers.get('access-control-allow-methods')).toMatch(/POST/);
  const bad = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: 'http://evil.example' } });
  expect(bad.status).toBe(403);
  expect(bad.headers.get('access-control-allow-origin')).toBeNull();
});

test('a Host the server does not answer to is refused on every method (DNS rebinding)', async () => {
  const { server, codec } = await serve();
  const body = JSON.stringify({ payloads: [await encrypted({ account: 'acct_9' })] });
  const evil = { Host: `rebind.evil.example:${server.port}` };
  for (const [method, path] of [
    ['POST', '/decode'],
    ['OPTIONS', '/decode'],
    ['GET', '/health'],
  ] as const) {
    const res = await rawRequest(
      server,
      method,
      path,
      { ...evil, ...auth, 'Content-Type': 'application/json' },
      method === 'POST' ? body : '',
    );
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'Codec.HostRefused' });
  }
  expect(codec.decoded).toBe(0);
  const good = await rawRequest(
    server,
    'POST',
    '/decode',
    { Host: `localhost:${server.port}`, ...auth, 'Content-Type': 'application/json' },
    body,
  );
  expect(good.status).toBe(200);
});

test('/encode is refused by default and served only when enabled', async () => {
  const plain = payloadToJson(defaultPayloadConverter.toPayload({ account: 'acct_9' }));
  const off = await serve();
  const refused = await post(off.server, '/encode', { payloads: [plain] }, auth);
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as { type: string }).type).toBe('Codec.EncodeDisabled');
  expect(off.codec.encoded).toBe(0);
  const on = await serve({ enableEncode: true });
  const res = await post(on.server, '/encode', { payloads: [plain] }, auth);
  expect(res.status).toBe(200);
  const enc = (await res.json()) as { payloads: JsonPayload[] };
  expect(Buffer.from(enc.payloads[0]!.metadata!.encoding!, 'base64').toString()).toBe('binary/encrypted');
});

test('no response names a key id: health, success, refusals and decode failures', async () => {
  const { server } = await serve({ enableEncode: true });
  const bodies: string[] = [];
  const collect = async (r: Promise<Response>): Promise<void> => {
    bodies.push(await (await r).text());
  };
  await collect(fetch(`${server.url}/health`));
  await collect(post(server, '/decode', { payloads: [] }));
  await collect(
    post(server, '/decode', { payloads: [await encrypted(1)] }, { ...auth, Origin: 'http://evil.example' }),
  );
  await collect(post(server, '/nope', {}, auth));
  await collect(post(server, '/decode', { nope: 1 }, auth));
  // A payload under an unknown key id, one with tampered data, and one under no key id.
  const unknown = await encrypted(1);
  unknown.metadata!['encryption-key-id'] = Buffer.from('kid-unknown-3').toString('base64');
  const tampered = await encrypted(2);
  tampered.data = Buffer.from('x'.repeat(40)).toString('base64');
  const noKid = await encrypted(3);
  delete noKid.metadata!['encryption-key-id'];
  for (const p of [unknown, tampered, noKid]) {
    const res = await post(server, '/decode', { payloads: [p] }, auth);
    expect(res.status).toBe(422);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ type: 'PayloadDecryptionError' });
    bodies.push(text);
  }
  const enc = await post(server, '/encode', { payloads: [payloadToJson(defaultPayloadConverter.toPayload(1))] }, auth);
  const encoded = (await enc.json()) as { payloads: JsonPayload[] };
  // The payload itself carries its key id (that is the format); the response around it names none.
  bodies.push(JSON.stringify({ ...encoded, payloads: [] }));
  expect(bodies).toHaveLength(9);
  for (const b of bodies) {
    expect(b).not.toContain(KEY_ID);
    expect(b).not.toContain('kid-unknown-3');
    expect(b).not.toMatch(/keyIds?|activeKeyId/);
  }
  expect(JSON.parse(bodies[0]!)).toEqual({ ok: true });
});

test('no token configured: the server refuses to start unless --insecure-dev, which is loopback-only', async () => {
  expect(() => codecAuthFromEnv({ host: '127.0.0.1' }, {})).toThrow(CodecServerConfigError);
  expect(() => codecAuthFromEnv({ host: '0.0.0.0', insecureDev: true }, {})).toThrow(/loopback/);
  expect(codecAuthFromEnv({ host: '127.0.0.1', insecureDev: true }, {})).toEqual({ kind: 'insecure-dev' });
  expect(codecAuthFromEnv({ host: '0.0.0.0' }, { LEDGERLOOP_CODEC_TOKEN: `${TOKEN}, ${TOKEN}x` })).toEqual({
    kind: 'bearer',
    tokens: [TOKEN, `${TOKEN}x`],
  });
  await expect(
    serveCodecFromEnv(
      { port: 0, host: '127.0.0.1' },
      { LEDGERLOOP_CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}` },
    ),
  ).rejects.toThrow(CodecServerConfigError);
  await expect(serve({ auth: { kind: 'bearer', tokens: ['short'] } })).rejects.toThrow(CodecServerConfigError);
  await expect(serve({ auth: { kind: 'bearer', tokens: [] } })).rejects.toThrow(CodecServerConfigError);
  await expect(serve({ allowedOrigins: ['*'] })).rejects.toThrow(CodecServerConfigError);
});

test('insecure-dev skips the token but still checks Origin and Host', async () => {
  const { server, codec } = await serve({ auth: { kind: 'insecure-dev' } });
  expect((await post(server, '/decode', { payloads: [await encrypted(1)] })).status).toBe(200);
  expect(
    (await post(server, '/decode', { payloads: [await encrypted(1)] }, { Origin: 'http://evil.example' })).status,
  ).toBe(403);
  const rebind = await rawRequest(
    server,
    'POST',
    '/decode',
    { Host: 'evil.example', 'Content-Type': 'application/json' },
    '{"payloads":[]}',
  );
  expect(rebind.status).toBe(403);
  expect(codec.decoded).toBe(1);
});

test('404 elsewhere, 400 on a malformed body', async () => {
  const { server } = await serve();
  expect((await fetch(`${server.url}/nope`, { headers: auth })).status).toBe(404);
  expect((await post(server, '/decode', { nope: 1 }, auth)).status).toBe(400);
});

test('a body over 8 MiB is refused with 413 Codec.TooLarge, declared or counted, and nothing is decoded', async () => {
  const { server, codec } = await serve();
  const big = JSON.stringify({ payloads: [{ data: 'A'.repeat(8 * 1024 * 1024) }] });
  const declared = await post(server, '/decode', JSON.parse(big), auth);
  expect(declared.status).toBe(413);
  expect(await declared.json()).toMatchObject({ type: 'Codec.TooLarge' });
  const counted = await new Promise<number>((resolve, reject) => {
    const req = http.request(`${server.url}/decode`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (let i = 0; i < big.length; i += 1 << 20) req.write(big.slice(i, i + (1 << 20)));
    req.end();
  });
  expect(counted).toBe(413);
  expect(codec.decoded).toBe(0);
});
