/**
 * The codec server and strict payloads: a real codec server on loopback (the one `ledgerloop codec-server`
 * runs), holding real AES-GCM keys, attacked over HTTP the way a browser page or a local process could; and a
 * plaintext payload handed to the strict codec a worker decodes with. An attack's "effect" is a payload the
 * attacker got decrypted or encrypted, or a plaintext payload a strict codec let through (each must be 0).
 * The full worker path of the strict codec (a plaintext run input fails the run, typed, and no workflow task;
 * nothing is scheduled) is `test/integration/codec-strict.test.ts`; plaintext messages, `hostile-messages.test.ts`.
 */
import http from 'node:http';
import type { Payload } from '@temporalio/common';
import { payloadToJson, startCodecServer } from '../../host/codec/codec-server';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import type { Attack, AttackGroup, AttackOutcome, Control } from '../attack';

const TOKEN = 'codec-attack-token-0123456789abcdefghijklmnop';
const UI_ORIGIN = 'http://localhost:8233';

interface Reply {
  readonly status: number;
  readonly type: string;
  readonly payloads: number;
}

/** One raw HTTP request (raw, so that `Host` can be set as a rebinding page would send it). */
function request(
  port: number,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: opts.method ?? 'POST', headers: opts.headers ?? {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            /* not JSON */
          }
          const payloads = Array.isArray(parsed['payloads']) ? parsed['payloads'].length : 0;
          resolve({
            status: res.statusCode ?? 0,
            type:
              typeof parsed['type'] === 'string'
                ? parsed['type']
                : typeof parsed['error'] === 'string'
                  ? parsed['error']
                  : '',
            payloads,
          });
        });
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export const codecAttacks: AttackGroup = {
  name: 'codec',
  async setup() {
    const { keys, keyId } = generateCodecKeys('attack');
    const strict = codecFromEnv({
      LEDGERLOOP_CODEC_KEYS: keys,
      LEDGERLOOP_CODEC_KEY_ID: keyId,
      LEDGERLOOP_CODEC_STRICT: '1',
    });
    if (strict === undefined || !strict.strict) throw new Error('the strict codec did not configure');
    const server = await startCodecServer({ codec: strict, auth: { kind: 'bearer', tokens: [TOKEN] } });
    const port = server.port;
    const plain: Payload = {
      metadata: { encoding: Buffer.from('json/plain') },
      data: Buffer.from(JSON.stringify({ principal: 'user:mallory' })),
    };
    const [secret] = await strict.encode([plain]);
    const decodeBody = JSON.stringify({ payloads: [payloadToJson(secret!)] });
    const json = { 'content-type': 'application/json' };
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const host = `127.0.0.1:${port}`;

    // The controls: the UI's own request is answered, and a genuine encrypted payload decodes under the strict
    // codec, so the refusals below are the server's and the codec's checks, not a dead port or a wrong key.
    const uiDecode: Control = {
      name: "the UI's own decode (its origin, the token)",
      expected: '200, 1 payload',
      async run() {
        const r = await request(port, '/decode', {
          headers: { ...json, ...bearer, host, origin: UI_ORIGIN },
          body: decodeBody,
        });
        return { observed: `${r.status}, ${r.payloads} payload(s)`, accepted: r.status === 200 && r.payloads === 1 };
      },
    };
    const genuine: Control = {
      name: 'a payload encrypted with the deployment key, decoded by the strict codec',
      expected: 'decoded, the same payload',
      async run() {
        const [out] = await strict.decode([secret!]);
        const same = out !== undefined && Buffer.from(out.data ?? []).equals(Buffer.from(plain.data ?? []));
        return { observed: same ? 'decoded, the same payload' : 'decoded something else', accepted: same };
      },
    };

    /** An HTTP attack: refused when the status and typed code are the expected ones and no payload came back. */
    const httpAttack = (name: string, status: number, type: string, send: () => Promise<Reply>): Attack => ({
      name,
      expected: `${status} ${type}`,
      control: uiDecode,
      async run(): Promise<AttackOutcome> {
        const r = await send();
        return {
          observed: `${r.status} ${r.type || '-'}`,
          refused: r.status === status && r.type === type,
          effects: r.payloads,
        };
      },
    });

    const attacks: Attack[] = [
      httpAttack('decode without a token', 401, 'Codec.Unauthenticated', () =>
        request(port, '/decode', { headers: { ...json, host }, body: decodeBody }),
      ),
      httpAttack('decode with a wrong token', 401, 'Codec.Unauthenticated', () =>
        request(port, '/decode', {
          headers: { ...json, host, authorization: `Bearer ${'x'.repeat(TOKEN.length)}` },
          body: decodeBody,
        }),
      ),
      httpAttack('a cross-origin POST to /decode, with the token', 403, 'Codec.OriginRefused', () =>
        request(port, '/decode', {
          headers: { ...json, ...bearer, host, origin: 'http://evil.example' },
          body: decodeBody,
        }),
      ),
      httpAttack(
        'a DNS-rebinding page (a foreign Host) posting to /decode, with the token',
        403,
        'Codec.HostRefused',
        () =>
          request(port, '/decode', {
            headers: { ...json, ...bearer, host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
            body: decodeBody,
          }),
      ),
      httpAttack(
        '/encode (plaintext in, payloads a strict worker accepts out), with the token',
        403,
        'Codec.EncodeDisabled',
        () =>
          request(port, '/encode', {
            headers: { ...json, ...bearer, host, origin: UI_ORIGIN },
            body: JSON.stringify({ payloads: [payloadToJson(plain)] }),
          }),
      ),
      httpAttack('listing the key ids (GET /keys), with the token', 404, 'Codec.NotFound', () =>
        request(port, '/keys', { method: 'GET', headers: { ...bearer, host } }),
      ),
      {
        name: 'a plaintext payload handed to a strict worker’s codec',
        expected: 'PayloadDecryptionError: plaintext payload refused',
        control: genuine,
        async run(): Promise<AttackOutcome> {
          try {
            const out = await strict.decode([plain]);
            return { observed: `decoded ${out.length} payload(s)`, refused: false, effects: out.length };
          } catch (err) {
            const e = err as Error;
            const refused = e.name === 'PayloadDecryptionError' && /plaintext payload refused/.test(e.message);
            return { observed: `${e.name}: ${e.message.split('\n')[0]?.slice(0, 80) ?? ''}`, refused, effects: 0 };
          }
        },
      },
    ];
    return { attacks, teardown: () => server.close() };
  },
};
