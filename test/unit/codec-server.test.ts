import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { payloadToJson, startCodecServer, type CodecServer, type JsonPayload } from '../../src/codec/codec-server';
import { parseCodecKeys } from '../../src/codec/data-converter';

const codec = new AesGcmPayloadCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`));
let server: CodecServer;

beforeAll(async () => {
  server = await startCodecServer({ codec, health: () => ({ keyIds: codec.keyIds }) });
});
afterAll(() => server.close());

async function post(route: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}

test('POST /encode then /decode round-trips payloads in the UI JSON shape', async () => {
  const payload = payloadToJson(defaultPayloadConverter.toPayload({ account: 'acct_9' }));
  const enc = (await (await post('/encode', { payloads: [payload] })).json()) as { payloads: JsonPayload[] };
  expect(Buffer.from(enc.payloads[0]!.metadata!.encoding!, 'base64').toString()).toBe('binary/encrypted');
  expect(Buffer.from(enc.payloads[0]!.data!, 'base64').includes('acct_9')).toBe(false);
  const dec = (await (await post('/decode', enc)).json()) as { payloads: JsonPayload[] };
  expect(JSON.parse(Buffer.from(dec.payloads[0]!.data!, 'base64').toString())).toEqual({ account: 'acct_9' });
});

test('CORS preflight from the UI origin allows X-Namespace and Content-Type', async () => {
  const res = await fetch(`${server.url}/decode`, {
    method: 'OPTIONS',
    headers: {
      Origin: 'http://localhost:8233',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type,x-namespace',
    },
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
  expect(res.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/);
  expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
  expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
});

test('an origin that is not allowed gets no CORS grant', async () => {
  const pre = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: 'http://evil.example' } });
  expect(pre.status).toBe(403);
  const res = await post('/decode', { payloads: [] }, { Origin: 'http://evil.example' });
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
});

test('GET /health, 404 elsewhere, 400 on a malformed body, 422 on an undecryptable payload', async () => {
  const health = await fetch(`${server.url}/health`);
  expect(await health.json()).toEqual({ ok: true, keyIds: ['k1'] });
  expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  expect((await post('/decode', { nope: 1 })).status).toBe(400);
  const enc = { metadata: { encoding: Buffer.from('binary/encrypted').toString('base64') }, data: '' };
  const res = await post('/decode', { payloads: [enc] });
  expect(res.status).toBe(422);
  expect(((await res.json()) as { type: string }).type).toBe('PayloadDecryptionError');
});
