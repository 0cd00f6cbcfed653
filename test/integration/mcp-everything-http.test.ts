/**
 * server-everything over Streamable HTTP, in its own process on a loopback port: the import reads its listing and
 * annotations (hints pick defaults only), and the MCP transport calls a tool over HTTP with the worker secret in a
 * header that no outcome carries.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import type { ToolIntent } from '../../src/domain/operation-key';
import { readListing } from '../../src/downstream/mcp/read-listing';
import { mcpServers } from '../../src/downstream/mcp/servers';
import { mcpTools, type McpTool } from '../../src/tools/mcp/declare';
import { importToolSet } from '../../src/tools/mcp/import-set';

const SERVER = join(resolve(__dirname, '../..'), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const SECRET = 'tok-everything-not-for-history';
let child: ChildProcess;

/** One first attempt of `echo` with `body`, as the dispatch activity hands it to a transport. */
function echoAttempt(tool: McpTool, body: Record<string, Json>, key: string, deadlineMs: number) {
  return {
    tool,
    intent: { argumentsHash: hashCanonical(body), tenant: 't1' } as ToolIntent,
    body,
    key,
    attempt: 1,
    fence: 1,
    intentAt: '2026-12-07T00:00:00.000Z',
    signal: new AbortController().signal,
    deadlineAtMs: Date.now() + deadlineMs,
  };
}
let url: string;

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, 'close');
  return port;
}

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  child = spawn(process.execPath, [SERVER, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((ok, fail) => {
    let seen = '';
    child.stderr!.on('data', (c: Buffer) => {
      seen += c.toString();
      if (seen.includes('listening')) ok();
    });
    child.once('exit', (code) => fail(new Error(`server-everything exited (${code}): ${seen.slice(0, 300)}`)));
  });
});

afterAll(async () => {
  child.kill('SIGTERM');
  if (child.exitCode === null) await once(child, 'exit');
});

test('the import reads annotations as defaults only: echo is a read, a hintless or destructive tool waits', async () => {
  const listing = await readListing('everything', { url });
  const report = importToolSet('everything', listing.tools, undefined);
  const byName = new Map(report.set.tools.map((t) => [t.mcpName, t]));
  expect(byName.get('echo')).toMatchObject({ effect: 'read', approval: 'none', contract: 'none' });
  for (const t of report.set.tools) {
    if (t.hints.readOnlyHint === true) expect(t.effect).toBe('read');
    else expect(t.approval).toBe(t.hints.destructiveHint === false ? 'none' : 'required');
    // idempotentHint alone never makes a tool idempotent_by_key.
    expect(t.contract).toBe('none');
  }
  // Every imported declaration loads, its schemas checked by the gate (json-schema.ts).
  expect(mcpTools(report.set).length).toBe(report.set.tools.length);
});

test('a call over Streamable HTTP is answered, and its outcome carries no secret', async () => {
  const listing = await readListing('everything', { url });
  const set = importToolSet('everything', new Map([['echo', listing.tools.get('echo')!]]), undefined).set;
  const [echo] = mcpTools(set);
  const servers = mcpServers(
    { everything: { url, auth: { secret: 'EVERYTHING_TOKEN' } } },
    { secrets: { EVERYTHING_TOKEN: SECRET } },
  );
  await servers.start();
  try {
    const body = { message: 'hi', tenant: 't1' };
    const out = await servers.transportFor(echo!)!.send(echoAttempt(echo!, body, 'op-echo-1', 10_000));
    expect(out).toMatchObject({ kind: 'ok', body: { isError: false, text: expect.stringContaining('hi') } });
    expect(JSON.stringify(out)).not.toContain(SECRET);
  } finally {
    await servers.close();
  }
});

test('positive control: the same call to a port nothing listens on is not sent, and says so', async () => {
  const port = await freePort();
  const listing = await readListing('everything', { url });
  const [echo] = mcpTools(importToolSet('everything', new Map([['echo', listing.tools.get('echo')!]]), undefined).set);
  const servers = mcpServers({ everything: { url: `http://127.0.0.1:${port}/mcp` } }, { connectTimeoutMs: 500 });
  void servers.start();
  try {
    const out = await servers
      .transportFor(echo!)!
      .send(echoAttempt(echo!, { message: 'hi', tenant: 't1' }, 'op-echo-2', 1_000));
    expect(out.kind).toBe('unavailable');
  } finally {
    await servers.close();
  }
});
