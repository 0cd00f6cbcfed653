/**
 * The network between the case's workers and one downstream service: a small HTTP forwarder that passes every
 * request through, except the n-th mutating request to a route, which it HOLDS (the request has left the worker
 * and is on the wire, but has not reached the service) until the runner releases it. That is how a stale write
 * is made real: the worker that sent it is SIGSTOPped past its attempt timeout, a retry commits elsewhere, and the
 * held request then reaches the service late, with its old fence.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpErrorCode, sendError } from '../../services/http-kit';
import { HttpBodyError, HttpBodyRefusal, readBody } from '../../src/http-body';

export interface HoldRule {
  /** Route to hold, e.g. `/v1/debits`; undefined: any POST. */
  readonly path?: string;
  /** Which matching request to hold (1 = the first). */
  readonly occurrence: number;
}

/** What the service answered to a released request. */
export interface Delivered {
  readonly status: number;
  readonly body: string;
}

export interface NetHold {
  /** The URL workers use instead of the service's. */
  readonly url: string;
  /** Resolves when the rule's request arrives and is being held. */
  readonly held: Promise<void>;
  /** Sends the held request on to the service and resolves with its answer. */
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

/** Starts a forwarder to `targetUrl` that holds the request `rule` names. */
export async function startNetHold(targetUrl: string, rule: HoldRule): Promise<NetHold> {
  const target = new URL(targetUrl);
  let seen = 0;
  let markHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  let pending: { req: http.IncomingMessage; body: Buffer; res: http.ServerResponse } | undefined;

  const server = http.createServer((req, res) => {
    void (async () => {
      let body: Buffer;
      try {
        body = await readBody(req, { limitBytes: FORWARD_LIMIT_BYTES });
      } catch (err) {
        // Refused as the service would refuse it (nothing was forwarded); anything else drops the connection.
        if (!(err instanceof HttpBodyError) || err.code !== HttpBodyRefusal.TooLarge) throw err;
        sendError(res, 413, HttpErrorCode.TooLarge, err.message);
        return;
      }
      const matches = req.method === 'POST' && (rule.path === undefined || req.url?.split('?')[0] === rule.path);
      if (matches && ++seen === rule.occurrence) {
        pending = { req, body, res };
        markHeld();
        return;
      }
      const answer = await forward(target, req, body);
      res.writeHead(
        answer.status,
        Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP_BY_HOP.has(k))),
      );
      res.end(answer.body);
    })().catch(() => res.destroy());
  });
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
      const answer = await forward(target, p.req, p.body);
      if (!p.res.destroyed) {
        p.res.writeHead(answer.status, { 'content-type': 'application/json' });
        p.res.end(answer.body);
      }
      return { status: answer.status, body: answer.body.toString('utf8') };
    },
    close() {
      pending?.res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
