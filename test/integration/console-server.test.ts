/**
 * The operator console's server on a real stack: sign-in by one-time code, the session cookie, the Origin, Host
 * and CSRF checks on every state-changing request, the inbox filtered by tenant and roles, and the run's typed
 * refusals shown as they were typed. Each refusal sits beside a positive control that passes the same check.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Stack } from '../../lab/stack';
import type { RunningConsole } from '../../console/server';
import type { InboxItem } from '../../console/inbox';
import { startAgentRun, readLedger } from '../../host/client/runs';
import { pendingApprovalsQuery } from '../../workflows/definitions';
import { deadlineIn, inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';
import { input } from '../helpers/run';
import { signIn, startTestConsole, waitFor, type ConsoleClient } from '../helpers/console';

jest.setTimeout(120_000);

let stack: Stack;
let worker: Worker;
let running: Promise<void>;
let consoleServer: RunningConsole;
let tq: string;

beforeAll(async () => {
  stack = await startTestStack('console');
  await stack.walletClient.seedAccount({
    tenant: 'acme',
    account: 'acct_1',
    balanceMinor: 10_000_000,
    currency: 'EUR',
  });
  tq = taskQueue('console');
  worker = await inProcessWorker(stack, tq);
  running = worker.run();
  consoleServer = await startTestConsole(stack);
});
afterAll(async () => {
  await consoleServer?.close();
  worker?.shutdown();
  await running;
  await stack?.stop();
});

const token = (principal: string, roles: string[] = [], tenant = 'acme') =>
  stack.identity.issue(principal, tenant, roles);

/** A run of alice's that waits for approval of a 600.00 EUR debit. */
async function pendingDebit(): Promise<{ handle: WorkflowHandle; callId: string }> {
  const handle = await startAgentRun(stack.client, {
    workflowId: `console-${Date.now()}-${Math.random().toString(16).slice(2, 6)}`,
    taskQueue: tq,
    input: input({
      vars: { account: 'acct_1', amount: { minor: 60_000, currency: 'EUR' } },
      deadlineAt: deadlineIn(90_000),
    }),
    identityToken: (run) => stack.identity.issueFor({ purpose: 'start', run }, 'user:alice', 'acme'),
  });
  const [p] = await waitFor(async () => {
    const list = await handle.query(pendingApprovalsQuery);
    return list.length ? list : undefined;
  });
  return { handle, callId: p!.logicalCallId };
}

async function inboxOf(c: ConsoleClient): Promise<InboxItem[]> {
  const res = await c.get('/api/inbox');
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: InboxItem[] }).items;
}

describe('sign-in and session', () => {
  test('a one-time code signs in once, leaves no token in any URL, and sets an HttpOnly SameSite=Strict cookie', async () => {
    const link = consoleServer.signInLink(await token('manager:carol', ['approver']));
    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const setCookie = first.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^ll_console=[\w-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    // The same link again: no session (the code is spent).
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/sign-in');
    expect(again.headers.get('set-cookie') ?? '').not.toMatch(/ll_console=/);
  });

  test('the page carries neither the token nor the session id; without a session the API refuses and pages redirect', async () => {
    const t = await token('manager:carol', ['approver']);
    const c = await signIn(consoleServer, t);
    const page = await (await c.get('/')).text();
    expect(page).toContain('manager:carol');
    expect(page).not.toContain(t);
    expect(page).not.toContain(c.cookie.split('=')[1]);
    const anon = await fetch(`${consoleServer.url}/api/inbox`);
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ type: 'Console.SignInRequired' });
    expect((await fetch(`${consoleServer.url}/`, { redirect: 'manual' })).headers.get('location')).toBe('/sign-in');
  });

  test('a pasted token of another issuer is refused with its typed reason; one of the configured issuer signs in', async () => {
    const form = await fetch(`${consoleServer.url}/sign-in`);
    const pre = (form.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const post = (tok: string) =>
      fetch(`${consoleServer.url}/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: pre, origin: consoleServer.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, token: tok }).toString(),
      });
    const forged = await post(`${(await token('manager:carol', ['approver'])).slice(0, -4)}AAAA`);
    expect(forged.status).toBe(401);
    expect(await forged.text()).toContain('Identity.Invalid');
    const good = await post(await token('manager:carol', ['approver']));
    expect(good.status).toBe(303);
    expect(good.headers.get('set-cookie') ?? '').toMatch(/ll_console=/);
  });
});

describe('every state-changing request has Origin, Host and CSRF checks', () => {
  let carol: ConsoleClient;
  beforeAll(async () => {
    carol = await signIn(consoleServer, await token('manager:carol', ['approver']));
  });
  const cancel = (headers?: Record<string, string>) =>
    carol.post('/api/runs/no-such-run/cancel', { reason: 'test' }, headers);

  test('another Origin, no Origin and a cross-site fetch are refused; the console’s own Origin passes', async () => {
    expect(await (await cancel({ origin: 'http://attacker.invalid' })).json()).toMatchObject({
      type: 'Console.OriginRefused',
    });
    expect(await (await cancel({ origin: '' })).json()).toMatchObject({ type: 'Console.OriginRefused' });
    expect(await (await cancel({ 'sec-fetch-site': 'cross-site' })).json()).toMatchObject({
      type: 'Console.OriginRefused',
    });
    // Positive control: the same request from the console's origin gets past the guard (and finds no such run).
    const ok = await cancel({ 'sec-fetch-site': 'same-origin' });
    expect(await ok.json()).toMatchObject({ type: 'Run.NotFound' });
  });

  test('a missing or wrong CSRF token is refused; the session’s token passes', async () => {
    expect(await (await cancel({ 'x-csrf-token': '' })).json()).toMatchObject({ type: 'Console.CsrfInvalid' });
    expect(await (await cancel({ 'x-csrf-token': `${carol.csrf.slice(0, -2)}xx` })).json()).toMatchObject({
      type: 'Console.CsrfInvalid',
    });
    const other = await signIn(consoleServer, await token('ops:bob', ['operator']));
    expect(await (await cancel({ 'x-csrf-token': other.csrf })).json()).toMatchObject({ type: 'Console.CsrfInvalid' });
    expect(await (await cancel()).json()).toMatchObject({ type: 'Run.NotFound' });
  });

  test('a request for another Host is refused (no DNS rebinding); the console’s own Host is served', async () => {
    const http = await import('node:http');
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port: consoleServer.port, path: '/healthz', headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await get('evil.example:80')).toBe(403);
    expect(await get(`localhost:${consoleServer.port}`)).toBe(200);
  });
});

describe('the inbox and the actions, as the run decides them', () => {
  test('each person sees their tenant’s items by role; the run’s typed refusal reaches the person; carol approves', async () => {
    const { handle, callId } = await pendingDebit();
    const key = `approval/${handle.workflowId}`;
    const [carol, bob, alice, viewer, globex] = await Promise.all([
      signIn(consoleServer, await token('manager:carol', ['approver'])),
      signIn(consoleServer, await token('ops:bob', ['operator'])),
      signIn(consoleServer, await token('user:alice', ['approver'])),
      signIn(consoleServer, await token('audit:vera', ['viewer'])),
      signIn(consoleServer, await token('manager:gina', ['approver'], 'globex')),
    ]);
    const mine = (items: InboxItem[]) => items.filter((i) => i.key.startsWith(key));
    const carols = mine(
      await waitFor(async () =>
        (await inboxOf(carol)).some((i) => i.key.startsWith(key)) ? inboxOf(carol) : undefined,
      ),
    );
    expect(carols).toHaveLength(1);
    expect(carols[0]).toMatchObject({
      tool: 'wallet_debit',
      amount: '600.00 EUR',
      principal: 'user:alice',
      actions: ['approve', 'deny'],
    });
    expect(Date.parse(carols[0]!.expiresAt!)).toBeGreaterThan(Date.now());
    expect(mine(await inboxOf(bob))).toHaveLength(0); // an operator is not an approver
    expect(mine(await inboxOf(viewer))).toMatchObject([{ actions: [] }]); // sees everything, is offered nothing
    expect(mine(await inboxOf(alice))).toHaveLength(1); // her own run
    expect(mine(await inboxOf(globex))).toHaveLength(0); // another tenant
    const item = carols[0]!;
    const decision = {
      logicalCallId: callId,
      argumentsHash: item.argumentsHash,
      policyVersion: item.policyVersion,
      reason: 'ok',
      ttlMs: 600_000,
    };
    const path = `/api/runs/${encodeURIComponent(handle.workflowId)}/approve`;
    // alice holds the approver role, but nobody approves their own call: the run's refusal, as typed.
    const own = await alice.post(path, decision);
    expect(own.status).toBe(422);
    expect(await own.json()).toMatchObject({
      type: 'Actor.Forbidden',
      message: expect.stringContaining('may not approve or deny its own call'),
    });
    // The viewer forges the request the page does not offer: the run refuses it too.
    expect(await (await viewer.post(path, decision)).json()).toMatchObject({ type: 'Actor.Forbidden' });
    // Another tenant's approver: the console does not act on a run outside the person's tenant.
    expect(await (await globex.post(path, decision)).json()).toMatchObject({ type: 'Console.NotInTenant' });
    // A TTL over the policy's cap: the run's validator.
    expect(await (await carol.post(path, { ...decision, ttlMs: 7_200_000 })).json()).toMatchObject({
      type: 'Approval.Invalid',
    });
    // Positive control: carol, within the cap.
    const ok = await carol.post(path, decision);
    expect(await ok.json()).toMatchObject({ ok: true, message: expect.stringContaining('approved') });
    expect((await handle.result()).stopReason).toBe('completed');
    const granted = (await readLedger(handle)).events.find((e) => e.type === 'ApprovalGranted');
    expect(granted).toMatchObject({ approver: 'manager:carol', actor: { principalId: 'manager:carol' } });
    await waitFor(async () => (mine(await inboxOf(carol)).length === 0 ? true : undefined));
  });
});
