/**
 * The network between the case's workers and one downstream service: a small HTTP forwarder that passes every
 * request through, except the n-th mutating request to a route, which it HOLDS (the request has left the worker
 * and is on the wire, but has not reached the service) until the runner releases it. That is how a stale write
 * is made real: the worker that sent it is SIGSTOPped past its attempt timeout, a retry commits elsewhere, and the
 * held request then reaches the service late, with its old fence.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createHttpServer, dropConnection, errorJson, HttpErrorCode } from '../../services/http-kit';

export interface HoldRule {
  /** Route to hold, e.g. `/v1/debits`; undefined: any POST. */
  readonly path?: string;
  /** Which matching request to hold (1 = the first). */
  readonly occurrence: number;
}

/** What the service answered to a released request: `status` 0 when it closed the connection without an answer. */
export interface Delivered {
  readonly status: number;
  readonly body: string;
}

export interface NetHold {
  /** The URL workers use instead of the service's. */
  readonly url: string;
  /** Resolves when the rule's request arrives and is being held. */
  readonly held: Promise<void>;
  /**
   * Sends the held request on to the service and resolves with its answer (never rejects: a service that drops
   * the connection, as a `drop_response` fault makes it, is an answer too, and the worker's connection is dropped).
   */
  release(): Promise<Delivered | undefined>;
  close(): Promise<void>;
}

/** The largest body forwarded: far above any service's own limit, so the service, not the wire, refuses a large body. */
const FORWARD_LIMIT_BYTES = 8 * 1024 * 1024;

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

function forward(
  target: URL,
  req: http.IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
  headers['content-length'] = body.length;
  return new Promise((resolve, reject) => {
    const out = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

/** The service's answer as this forwarder's response (hop-by-hop headers dropped). */
function answerOf(answer: Awaited<ReturnType<typeof forward>>): Response {
  const headers = new Headers();
  for (const [k, v] of Object.entries(answer.headers))
    if (!HOP_BY_HOP.has(k) && v !== undefined) for (const one of [v].flat()) headers.append(k, one);
  return new Response(new Uint8Array(answer.body), { status: answer.status, headers });
}

/** Starts a forwarder to `targetUrl` that holds the request `rule` names. */
export async function startNetHold(targetUrl: string, rule: HoldRule): Promise<NetHold> {
  const target = new URL(targetUrl);
  let seen = 0;
  let markHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  let pending: { req: http.IncomingMessage; body: Buffer; answer: (r: Response) => void; drop: () => void } | undefined;

  const app = new Hono<{ Bindings: HttpBindings }>();
  // Refused as the service would refuse it (nothing is forwarded).
  const tooLarge = (): Response =>
    errorJson(413, HttpErrorCode.TooLarge, `request body exceeds ${FORWARD_LIMIT_BYTES} bytes`);
  app.use('*', bodyLimit({ maxSize: FORWARD_LIMIT_BYTES, onError: tooLarge }));
  app.all('*', async (c) => {
    const req = c.env.incoming;
    const body = Buffer.from(await c.req.arrayBuffer());
    const matches = req.method === 'POST' && (rule.path === undefined || req.url?.split('?')[0] === rule.path);
    if (matches && ++seen === rule.occurrence) {
      // Held: answered when the runner releases it (release) or never (close drops the connection).
      return new Promise<Response>((answer) => {
        pending = { req, body, answer, drop: () => answer(dropConnection(c)) };
        markHeld();
      });
    }
    return answerOf(await forward(target, req, body));
  });
  // Anything that goes wrong on the way drops the connection, as a network would.
  app.onError((_err, c) => dropConnection(c));
  const server = createHttpServer((request, env) => app.fetch(request, env));
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    held,
    async release() {
      const p = pending;
      pending = undefined;
      if (!p) return undefined;
      let answer: Awaited<ReturnType<typeof forward>>;
      try {
        answer = await forward(target, p.req, p.body);
      } catch (err) {
        p.drop();
        return { status: 0, body: `no answer: ${(err as Error).message}` };
      }
      p.answer(
        new Response(new Uint8Array(answer.body), {
          status: answer.status,
          headers: { 'content-type': 'application/json' },
        }),
      );
      return { status: answer.status, body: answer.body.toString('utf8') };
    },
    close() {
      pending?.req.socket.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
