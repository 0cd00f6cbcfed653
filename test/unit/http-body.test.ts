import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpBodyError, HttpBodyRefusal, readJsonBody, type ReadBodyOptions } from '../../src/http-body';

/** A server that reads each body with `opts` and answers 200 with the JSON it read, or 400 with the error's code. */
async function withServer(opts: ReadBodyOptions, run: (url: string) => Promise<void>): Promise<void> {
  const server = http.createServer((req, res) => {
    readJsonBody(req, opts).then(
      (value) => res.end(JSON.stringify({ value })),
      (err: unknown) => {
        res.statusCode = 400;
        res.end(JSON.stringify({ code: err instanceof HttpBodyError ? err.code : String(err) }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** POSTs `body`; `chunked` sends it without Content-Length, so the limit is found by counting. */
function post(url: string, body: string, chunked = false): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    if (chunked) {
      req.setHeader('transfer-encoding', 'chunked');
      for (let i = 0; i < body.length; i += 1024) req.write(body.slice(i, i + 1024));
      req.end();
    } else {
      req.end(body);
    }
  });
}

describe('readJsonBody', () => {
  it('reads JSON within the limit', async () => {
    await withServer({ limitBytes: 1024 }, async (url) => {
      expect(await post(url, '{"a":1}')).toEqual({ status: 200, json: { value: { a: 1 } } });
    });
  });

  it('refuses a body over the limit, declared or counted, and the connection still carries the answer', async () => {
    await withServer({ limitBytes: 1024 }, async (url) => {
      const big = JSON.stringify({ memo: 'x'.repeat(4096) });
      const refused = { status: 400, json: { code: HttpBodyRefusal.TooLarge } };
      expect(await post(url, big)).toEqual(refused);
      expect(await post(url, big, true)).toEqual(refused);
    });
  });

  it('names an empty body and one that is not JSON', async () => {
    await withServer({ limitBytes: 1024 }, async (url) => {
      expect(await post(url, '  ')).toEqual({ status: 400, json: { code: HttpBodyRefusal.Empty } });
      expect(await post(url, '{"a":')).toEqual({ status: 400, json: { code: HttpBodyRefusal.NotJson } });
    });
  });

  it('refuses a limit that is not a positive integer', async () => {
    const req = {} as http.IncomingMessage;
    await expect(readJsonBody(req, { limitBytes: 0 })).rejects.toThrow(RangeError);
    await expect(readJsonBody(req, { limitBytes: Number.NaN })).rejects.toThrow(RangeError);
  });
});
