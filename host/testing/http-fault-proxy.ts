/**
 * A loopback HTTP proxy for the fault protocol's points on a third-party HTTP API, which cannot be armed itself: the
 * worker is pointed at the proxy (`services.<name>` = its URL), and the proxy forwards to the API, injecting at
 *
 * | point            | kinds                               | what happens                                           |
 * |------------------|-------------------------------------|--------------------------------------------------------|
 * | `before_forward` | `drop_response`, `delay`, `error_5xx` | the request never reaches the API (cut, held, or 503)  |
 * | `after_response` | `drop_response`, `delay`              | the API answered (it committed): the answer is cut, or held |
 *
 * Loopback only; it stops with `close()`. Counts what it forwarded, so a test can tell sends from effects.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProxyFault {
  readonly at: 'before_forward' | 'after_response';
  readonly do: 'drop_response' | 'delay' | 'error_5xx';
  readonly method?: string;
  /** Only this path (without the query), e.g. `/v1/charges`. */
  readonly path?: string;
  readonly occurrence?: number;
  readonly times?: number;
  readonly ms?: number;
}

interface Armed {
  readonly fault: ProxyFault;
  seen: number;
  fired: number;
}

export interface FaultProxy {
  readonly url: string;
  /** Requests forwarded to the API, by `METHOD path`. */
  readonly forwarded: Map<string, number>;
  arm(fault: ProxyFault): void;
  clear(): void;
  /** How many times each armed fault fired. */
  fired(): number[];
  close(): Promise<void>;
}

function fire(armed: Armed[], at: ProxyFault['at'], method: string, path: string): ProxyFault | undefined {
  for (const a of armed) {
    const f = a.fault;
    if (f.at !== at || (f.method !== undefined && f.method !== method) || (f.path !== undefined && f.path !== path))
      continue;
    a.seen += 1;
    if (a.seen < (f.occurrence ?? 1) || a.fired >= (f.times ?? 1)) continue;
    a.fired += 1;
    return f;
  }
  return undefined;
}

/** Starts a proxy on 127.0.0.1 in front of `target` (the API's base URL). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(upstream.hostname))
    throw new Error(`the fault proxy forwards to loopback only, not ${upstream.hostname}`);
  const armed: Armed[] = [];
  const forwarded = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const method = req.method ?? 'GET';
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        const before = fire(armed, 'before_forward', method, path);
        if (before?.do === 'delay') await sleep(before.ms ?? 2_000);
        if (before?.do === 'drop_response') return req.socket.destroy();
        if (before?.do === 'error_5xx') {
          res.writeHead(503, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: { type: 'api_error', code: 'proxy_fault', message: 'injected' } }));
        }
        forwarded.set(`${method} ${path}`, (forwarded.get(`${method} ${path}`) ?? 0) + 1);
        const answer = await forward(upstream, req, Buffer.concat(chunks));
        const after = fire(armed, 'after_response', method, path);
        if (after?.do === 'delay') await sleep(after.ms ?? 2_000);
        if (answer === undefined || after?.do === 'drop_response') return req.socket.destroy();
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    arm: (fault) => void armed.push({ fault, seen: 0, fired: 0 }),
    clear: () => void (armed.length = 0),
    fired: () => armed.map((a) => a.fired),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function forward(
  upstream: URL,
  req: http.IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer } | undefined> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
  try {
    const res = await fetch(new URL(req.url ?? '/', upstream), {
      method: req.method ?? 'GET',
      headers,
      ...(body.length > 0 ? { body } : {}),
      redirect: 'manual',
    });
    const out: Record<string, string> = {};
    res.headers.forEach((value, key) => {
      if (!['content-length', 'connection', 'transfer-encoding', 'content-encoding'].includes(key)) out[key] = value;
    });
    return { status: res.status, headers: out, body: Buffer.from(await res.arrayBuffer()) };
  } catch {
    return undefined; // the API did not answer: neither does the proxy
  }
}
