/**
 * A process's token for a frontend that authorizes (LEDGERLOOP_TEMPORAL_TOKEN_FILE): the client and the worker
 * connections send it as `authorization: Bearer <token>`, and send the new one once the file is rewritten, as a
 * token issuer's refresh does. Observed on the wire by a bare HTTP/2 gRPC endpoint that records each call's
 * authorization header and answers an empty message (valid for every call made here).
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connectClient, connectNative, resolveConnectionConfig } from '../../host/server/connection-config';
import { FrontendTokenError, tokenFileSource } from '../../host/server/frontend-token';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frontend-token-'));
const jws = (n: number): string => `eyJhbGciOiJFZERTQSJ9.eyJuIjo${n}fQ.c2lnbmF0dXJl`;
const write = (file: string, text: string): void => {
  // As an issuer's agent does: write beside, then rename over.
  fs.writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
};

interface Seen {
  readonly path: string;
  readonly authorization: string | undefined;
}

function startEndpoint(): Promise<{ address: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    seen.push({ path: String(headers[':path']), authorization: headers['authorization'] as string | undefined });
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
        seen,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Calls `call` until the endpoint's last call carried `token`, or throws after 15 s: a connection reads its token
 * file again on its own clock (a client at most once a second, a worker on a timer), so the test waits for the
 * header it expects instead of guessing how long that takes.
 */
async function untilSent(seen: Seen[], token: string, call: () => Promise<unknown>): Promise<void> {
  const end = Date.now() + 15_000;
  await call();
  while (seen.at(-1)?.authorization !== `Bearer ${token}`) {
    if (Date.now() > end) throw new Error(`Bearer ${token} not sent within 15 s`);
    await new Promise((r) => setTimeout(r, 100));
    await call();
  }
}

test('a token file is read again when it changes; a rewrite that holds no token keeps the last good one', () => {
  const file = path.join(dir, 'source.jwt');
  write(file, `${jws(1)}\n`);
  const source = tokenFileSource(file, 0);
  expect(source.current()).toBe(jws(1));
  write(file, jws(2));
  expect(source.current()).toBe(jws(2));
  write(file, 'half a tok');
  expect(source.current()).toBe(jws(2));
  expect(() => tokenFileSource(path.join(dir, 'missing.jwt'))).toThrow(FrontendTokenError);
  fs.writeFileSync(path.join(dir, 'empty.jwt'), '\n');
  expect(() => tokenFileSource(path.join(dir, 'empty.jwt'))).toThrow(/holds no token/);
});

test('a client sends the file’s token as a bearer token, and the new one after the file is rewritten', async () => {
  const endpoint = await startEndpoint();
  const file = path.join(dir, 'client.jwt');
  write(file, jws(1));
  const { connection, config } = await connectClient(
    { address: endpoint.address },
    { HOME: dir, LEDGERLOOP_TEMPORAL_TOKEN_FILE: file },
  );
  try {
    await connection.workflowService.getSystemInfo({});
    write(file, jws(2));
    await untilSent(endpoint.seen, jws(2), () => connection.workflowService.getSystemInfo({}));
  } finally {
    await connection.close();
    await endpoint.close();
  }
  expect(config.credential).toEqual({ kind: 'token-file', path: file });
  const sent = endpoint.seen.filter((s) => s.path.endsWith('/GetSystemInfo')).map((s) => s.authorization);
  expect(sent[0]).toBe(`Bearer ${jws(1)}`);
  expect(sent.at(-1)).toBe(`Bearer ${jws(2)}`);
});

test('a worker connection is given the new token once the file changes', async () => {
  const endpoint = await startEndpoint();
  const file = path.join(dir, 'worker.jwt');
  write(file, jws(3));
  const { connection } = await connectNative(
    { address: endpoint.address },
    { HOME: dir, LEDGERLOOP_TEMPORAL_TOKEN_FILE: file },
  );
  try {
    await connection.workflowService.getSystemInfo({});
    write(file, jws(4));
    await untilSent(endpoint.seen, jws(4), () => connection.workflowService.getSystemInfo({}));
  } finally {
    await connection.close();
    await endpoint.close();
  }
  const sent = endpoint.seen.map((s) => s.authorization);
  expect(sent).toContain(`Bearer ${jws(3)}`);
  expect(sent.at(-1)).toBe(`Bearer ${jws(4)}`);
}, 30_000);

test('without a token file or an actor, nothing is sent: the dev server sees no authorization header', async () => {
  const endpoint = await startEndpoint();
  const { connection, config } = await connectClient({ address: endpoint.address }, { HOME: dir });
  try {
    await connection.workflowService.getSystemInfo({});
  } finally {
    await connection.close();
    await endpoint.close();
  }
  expect(config.credential).toBeUndefined();
  expect(endpoint.seen.length).toBeGreaterThan(0);
  expect(endpoint.seen.every((s) => s.authorization === undefined)).toBe(true);
});

describe('which credential a connection sends', () => {
  const file = path.join(dir, 'which.jwt');
  beforeAll(() => write(file, jws(5)));
  const env = { HOME: dir, LEDGERLOOP_TEMPORAL_TOKEN_FILE: file };

  test("an actor's token (a command's --token) is the credential for that command, over the token file", () => {
    const c = resolveConnectionConfig({ address: '127.0.0.1:7233', bearerToken: jws(6) }, env);
    expect(c.credential).toEqual({ kind: 'actor', token: jws(6) });
    expect(c.tls).toBeUndefined();
  });

  test('a Temporal API key is never replaced by an actor, and a token file beside one is refused', () => {
    const cloud = { HOME: dir, TEMPORAL_ADDRESS: 'ns.tmprl.example:7233', TEMPORAL_API_KEY: 'cloud-key' };
    expect(resolveConnectionConfig({ bearerToken: jws(6) }, cloud).credential).toBeUndefined();
    expect(() => resolveConnectionConfig({}, { ...cloud, LEDGERLOOP_TEMPORAL_TOKEN_FILE: file })).toThrow(/both/);
  });

  test('no token in plaintext beyond loopback: a token file is refused, an actor token is not sent', () => {
    const remote = { ...env, TEMPORAL_ADDRESS: 'temporal.example:7233' };
    expect(() => resolveConnectionConfig({}, remote)).toThrow(/plaintext/);
    const { LEDGERLOOP_TEMPORAL_TOKEN_FILE: _f, ...noFile } = remote;
    expect(resolveConnectionConfig({ bearerToken: jws(6) }, noFile).credential).toBeUndefined();
    // With TLS it goes.
    expect(resolveConnectionConfig({}, { ...remote, TEMPORAL_TLS: '1' }).credential).toEqual({
      kind: 'token-file',
      path: file,
    });
  });
});
