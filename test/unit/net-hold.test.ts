/**
 * The network hold of `tool.in_flight`: the held request, released, reaches the service late; a service that
 * drops the connection on it (a `drop_response` fault) is an answer the runner records, never a failure that
 * stops the runner (seed 1 case 268 crashed the explorer: `socket hang up`, unhandled).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startNetHold } from '../../lab/faults/net-hold';

async function service(answer: 'created' | 'drop'): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (answer === 'drop') req.socket.destroy();
      else res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A worker's POST through the hold: resolves with its status, or the error its connection ended with. */
function post(url: string): Promise<number | string> {
  return fetch(`${url}/v1/debits`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  }).then(
    (r) => r.status,
    (err: Error) => err.message,
  );
}

test.each([
  ['answers', 'created', 201],
  ['drops the connection', 'drop', 0],
] as const)('a released request whose service %s resolves with what happened', async (_what, answer, status) => {
  const svc = await service(answer);
  const hold = await startNetHold(svc.url, { path: '/v1/debits', occurrence: 1 });
  try {
    const sent = post(hold.url);
    await hold.held;
    const delivered = await hold.release();
    expect(delivered?.status).toBe(status);
    if (status === 0) expect(delivered?.body).toMatch(/no answer/);
    // the worker gets the service's answer, or a dropped connection
    expect(await sent).toBe(status === 0 ? 'fetch failed' : 201);
  } finally {
    await hold.close();
    await svc.close();
  }
});
