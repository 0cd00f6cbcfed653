/**
 * The HTTP API transport, read from a declaration (the Stripe-style `payments_charge` of the transport tests):
 * statuses as the declaration reads them and UNKNOWN for anything it does not name, the key in its header with the
 * vendor prefix, the credential only in its header, and a lookup by a metadata search.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Failure } from '../../src/domain/failures';
import type { HttpTransport } from '../../src/domain/transport';
import { HttpApiTransport } from '../../src/downstream/http-transport';
import type { AttemptCall } from '../../src/downstream/transport';
import { attemptCall } from '../helpers/attempt-call';
import { paymentsCharge } from '../support/transports/tools';

const decl = paymentsCharge.transport as HttpTransport;
const SECRET = 'sk_test_payments_abcdef0123456789';
const body = { tenant: 'acme', customer: 'cus_1', amount: { minor: 1250, currency: 'EUR' } };

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function server(answer: (seen: Seen, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const s = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const one = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: text };
      seen.push(one);
      answer(one, res);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

function call(over: Partial<AttemptCall> = {}): AttemptCall {
  return attemptCall(
    paymentsCharge,
    body,
    { runId: 'r', providerCallId: 'p', logicalCallId: 'lc', key: 'op_abc' },
    over,
  );
}

const json = (res: http.ServerResponse, status: number, b: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(b));
};

describe('a request', () => {
  test('carries the key in its header with the vendor prefix, the credential in Authorization, a form body', async () => {
    const s = await server((_seen, res) =>
      json(res, 200, { id: 'ch_1', status: 'succeeded', amount: 1250, currency: 'eur' }),
    );
    const t = new HttpApiTransport(decl, { baseUrl: s.url, secrets: { PAYMENTS_API_KEY: SECRET } });
    const out = await t.send(call());
    await s.close();
    expect(out).toMatchObject({ kind: 'ok', receipt: 'ch_1', replayed: false });
    const [req] = s.seen;
    expect(req).toMatchObject({ method: 'POST', url: '/v1/charges' });
    expect(req!.headers['idempotency-key']).toBe('ll_op_abc');
    expect(req!.headers['authorization']).toBe(`Bearer ${SECRET}`);
    expect(new URLSearchParams(req!.body).get('metadata[ledgerloop_key]')).toBe('ll_op_abc');
    expect(new URLSearchParams(req!.body).get('amount')).toBe('1250');
    expect(req!.url).not.toContain(SECRET);
  });

  test('a timeout after sending is UNKNOWN (response_lost); a refused connection is unavailable', async () => {
    const s = await server(() => undefined); // never answers
    const t = new HttpApiTransport(decl, { baseUrl: s.url, secrets: { PAYMENTS_API_KEY: SECRET }, timeoutMs: 100 });
    expect((await t.send(call())).kind).toBe('response_lost');
    s.seen.length = 0;
    const gone = await server(() => undefined);
    await gone.close(); // nothing listens on its port any more
    const closed = new HttpApiTransport(decl, { baseUrl: gone.url, secrets: { PAYMENTS_API_KEY: SECRET } });
    expect((await closed.send(call())).kind).toBe('unavailable');
    await s.close();
  });
});

describe('statuses, as the declaration reads them', () => {
  const t = new HttpApiTransport(decl, { baseUrl: 'http://127.0.0.1:9', secrets: {} });
  test.each([
    [409, { error: { code: 'idempotency_key_in_use' } }, 'in_progress'],
    [429, {}, 'unavailable'],
    [402, { error: { code: 'card_declined' } }, 'rejected'],
    [400, { error: { type: 'invalid_request_error' } }, 'rejected'],
    [500, { error: { type: 'api_error' } }, 'response_lost'],
    [503, {}, 'response_lost'],
    [404, {}, 'response_lost'], // a 4xx the declaration does not name proves nothing
    [409, { error: { code: 'something_else' } }, 'response_lost'],
  ])('%i %j reads as %s', (status, b, kind) => {
    expect(t.classify(status, b, false).kind).toBe(kind);
  });

  test('the same key with other parameters is the contract refusal; a decline carries its mapped code', () => {
    expect(t.classify(400, { error: { type: 'idempotency_error' } }, false)).toMatchObject({
      kind: 'rejected',
      code: Failure.IdempotencyArgumentsMismatch,
    });
    expect(t.classify(402, { error: { code: 'card_declined' } }, false)).toMatchObject({
      reason: 'Payments.CardDeclined',
    });
  });

  test('a 2xx without a readable body is UNKNOWN, and a replay is reported', () => {
    expect(t.classify(200, undefined, false).kind).toBe('response_lost');
    expect(t.classify(200, { id: 'ch_1' }, true)).toMatchObject({ kind: 'ok', replayed: true });
  });
});

describe('a lookup by a metadata search', () => {
  test('asks with the prefixed key and reads found, failed and not found', async () => {
    const answers = [
      { data: [{ id: 'ch_1', status: 'succeeded' }] },
      { data: [{ id: 'ch_2', status: 'failed' }] },
      { data: [] },
    ];
    const s = await server((_seen, res) => json(res, 200, answers.shift()));
    const t = new HttpApiTransport(decl, { baseUrl: s.url, secrets: { PAYMENTS_API_KEY: SECRET } });
    const q = { tool: paymentsCharge, intent: call().intent, key: 'op_abc', seal: false, body };
    expect(await t.lookup(q)).toMatchObject({ kind: 'found', status: 'completed', receipt: 'ch_1' });
    expect(await t.lookup(q)).toMatchObject({ kind: 'found', status: 'failed' });
    expect(await t.lookup(q)).toEqual({ kind: 'not_found', sealed: false }); // an HTTP API never seals
    await s.close();
    const query = new URL(s.seen[0]!.url, 'http://x').searchParams.get('query');
    expect(query).toBe('metadata["ledgerloop_key"]:"ll_op_abc"');
    expect(s.seen[0]!.headers['authorization']).toBe(`Bearer ${SECRET}`);
  });
});
