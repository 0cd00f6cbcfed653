/**
 * The console's routes on one Hono app: pages (inbox, run, sign-in), the JSON API behind the page script (inbox,
 * its live stream, the actions) and the static files. Guards first (guard.ts); each API route requires a session
 * and, when it changes state, the session's CSRF token.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { verifySessionToken } from '../src/identity/verify';
import { runAction, type ActionName } from './actions';
import type { ConsoleDeps } from './config';
import { baseGuard, loadSession, originGuard, requireSession, sendRefusal, type ConsoleEnv } from './guard';
import { collectInbox, sortItems, type SortOrder } from './inbox';
import { inboxItemsHtml, inboxPage } from './pages/inbox-page';
import { html, layout, str, type Html } from './pages/layout';
import { liveHtml, runPage } from './pages/run-page';
import { signInPage } from './pages/sign-in-page';
import { ConsoleRefusal, refusal } from './refusal';
import { abilitiesOf, readPolicy, ttlChoicesMs } from './roles';
import { loadRunPage } from './run-model';
import {
  PRE_SESSION_COOKIE,
  randomToken,
  sameSecret,
  SESSION_COOKIE,
  type Session,
  type Sessions,
  type SignInCodes,
} from './session';

const STATIC: Readonly<Record<string, string>> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};
const ACTIONS: readonly ActionName[] = ['approve', 'deny', 'resolve', 'cancel', 'lookup', 'settle'];

export interface RouteOptions {
  readonly deps: ConsoleDeps;
  readonly sessions: Sessions;
  readonly codes: SignInCodes;
  readonly allowed: { readonly origins: ReadonlySet<string>; readonly hosts: ReadonlySet<string> };
  /** Mark cookies Secure (the console is served over https). */
  readonly secureCookies: boolean;
  /** The live streams: `closing` ends them; `close` waits for `loops` so no Temporal call outlives the console. */
  readonly live: { closing: boolean; readonly loops: Set<Promise<void>> };
}

export function consoleApp(o: RouteOptions): Hono<ConsoleEnv> {
  const { deps, sessions, codes } = o;
  const app = new Hono<ConsoleEnv>();
  const files = Object.fromEntries(
    Object.keys(STATIC).map((f) => [f, fs.readFileSync(path.join(__dirname, 'static', f), 'utf8')]),
  );
  const cookie = { httpOnly: true, sameSite: 'Strict', secure: o.secureCookies, path: '/' } as const;
  const order = (c: Context): SortOrder => (c.req.query('sort') === 'newest' ? 'newest' : 'oldest');
  const ttls = () => {
    const policy = readPolicy(deps.policies);
    return {
      ttls: ttlChoicesMs(policy),
      ...(policy ? { defaultTtl: Math.min(policy.approvalTtlMs, policy.maxApprovalTtlMs) } : {}),
    };
  };
  const startSession = (c: Context, session: Session): void => {
    setCookie(c, SESSION_COOKIE, session.id, { ...cookie, expires: new Date(session.expiresAtMs) });
    deleteCookie(c, PRE_SESSION_COOKIE, { path: '/' });
  };

  app.use('*', baseGuard(o.allowed.hosts), originGuard(o.allowed.origins), loadSession(sessions));
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/static/:file', (c) => {
    const f = c.req.param('file');
    const type = STATIC[f];
    return type && files[f] ? c.body(files[f], 200, { 'content-type': type }) : c.notFound();
  });

  app.get('/sign-in', (c) => {
    const pre = randomToken();
    setCookie(c, PRE_SESSION_COOKIE, pre, { ...cookie, maxAge: 900 });
    return c.html(signInPage({ csrf: pre }));
  });
  app.post('/sign-in', async (c) => {
    const form = await c.req.parseBody();
    const pre = getCookie(c, PRE_SESSION_COOKIE);
    if (!sameSecret(typeof form.csrf === 'string' ? form.csrf : undefined, pre))
      return sendRefusal(
        c,
        refusal(403, ConsoleRefusal.CsrfInvalid, 'the sign-in form carries no valid CSRF value; reload it'),
      );
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    try {
      const person = await verifySessionToken(deps.issuers, token);
      startSession(c, sessions.create(person, token));
      return c.redirect('/', 303);
    } catch (err) {
      const fresh = randomToken();
      setCookie(c, PRE_SESSION_COOKIE, fresh, { ...cookie, maxAge: 900 });
      const type = (err as { type?: string }).type ?? 'Identity.Invalid';
      return c.html(signInPage({ csrf: fresh, problem: { type, message: (err as Error).message } }), 401);
    }
  });
  // The dev links `npm start` prints: a one-time code, exchanged here; the redirect leaves no code in the URL.
  app.get('/sign-in/dev', async (c) => {
    const token = codes.take(c.req.query('code'));
    if (!token) return c.redirect('/sign-in', 303);
    try {
      startSession(c, sessions.create(await verifySessionToken(deps.issuers, token), token));
      return c.redirect('/', 303);
    } catch {
      return c.redirect('/sign-in', 303);
    }
  });
  app.post('/sign-out', async (c) => {
    const session = c.get('session');
    const form = await c.req.parseBody();
    if (session && sameSecret(typeof form.csrf === 'string' ? form.csrf : c.req.header('x-csrf-token'), session.csrf)) {
      sessions.end(session.id);
      deleteCookie(c, SESSION_COOKIE, { path: '/' });
      return c.redirect('/sign-in', 303);
    }
    return sendRefusal(c, refusal(403, ConsoleRefusal.CsrfInvalid, 'sign-out needs the session’s CSRF token'));
  });

  app.get('/', async (c) => {
    const session = c.get('session');
    if (!session) return c.redirect('/sign-in', 303);
    const inbox = await collectInbox(deps, session.person, session.token).catch((err: unknown) => ({
      items: [],
      problems: [(err as Error).message],
    }));
    const sorted = { ...inbox, items: sortItems(inbox.items, order(c)) };
    const t = ttls();
    return c.html(
      layout({
        title: 'Inbox',
        person: session.person,
        csrf: session.csrf,
        body: inboxPage(sorted, order(c), Date.now(), t.ttls, t.defaultTtl),
      }),
    );
  });
  app.get('/runs/:workflowId', async (c) => {
    const session = c.get('session');
    if (!session) return c.redirect('/sign-in', 303);
    const page = await loadRunPage(deps, session, c.req.param('workflowId'), c.req.query('run'));
    if ('status' in page && 'type' in page)
      return c.html(
        layout({ title: 'Run', person: session.person, csrf: session.csrf, body: refusalBody(page) }),
        page.status,
      );
    const a = abilitiesOf(session.person, readPolicy(deps.policies), deps.viewerRoles);
    const t = ttls();
    return c.html(
      layout({
        title: page.workflowId,
        person: session.person,
        csrf: session.csrf,
        body: runPage(page, a, page.principal === session.person.principalId, t.ttls, t.defaultTtl),
      }),
    );
  });

  const api = new Hono<ConsoleEnv>();
  api.use('*', requireSession);
  api.get('/inbox', async (c) => {
    const s = c.get('session')!;
    const inbox = await collectInbox(deps, s.person, s.token);
    return c.json({ ok: true, items: sortItems(inbox.items, order(c)), problems: inbox.problems });
  });
  api.get('/inbox/stream', (c) => {
    const s = c.get('session')!;
    return streamSSE(c, async (stream) => {
      let ended!: () => void;
      const loop = new Promise<void>((resolve) => (ended = resolve));
      o.live.loops.add(loop);
      let last = '';
      let quietSince = Date.now();
      while (!stream.aborted && !o.live.closing && sessions.get(s.id)) {
        const at = Date.now();
        const inbox = await collectInbox(deps, s.person, s.token).catch((err: unknown) => ({
          items: [],
          problems: [(err as Error).message],
        }));
        const t = ttls();
        const items = inboxItemsHtml({ ...inbox, items: sortItems(inbox.items, order(c)) }, at, t.ttls, t.defaultTtl);
        const body = JSON.stringify({ items, problems: inbox.problems });
        if (body !== last || at - quietSince > 15_000) {
          await stream.writeSSE({
            event: 'inbox',
            data: JSON.stringify({ at, count: items.length, items, problems: inbox.problems }),
          });
          last = body;
          quietSince = at;
        }
        await stream.sleep(Math.max(100, deps.refreshMs - (Date.now() - at)));
      }
      o.live.loops.delete(loop);
      ended();
    });
  });
  api.get('/runs/:workflowId/live', async (c) => {
    const s = c.get('session')!;
    const page = await loadRunPage(deps, s, c.req.param('workflowId'), c.req.query('run'));
    if ('type' in page && 'message' in page) return sendRefusal(c, page);
    return c.json({ ok: true, open: page.open, html: String(liveHtml(page)) });
  });
  api.post('/runs/:workflowId/:action', async (c) => {
    const s = c.get('session')!;
    const action = c.req.param('action') as ActionName;
    if (!ACTIONS.includes(action))
      return sendRefusal(c, refusal(404, ConsoleRefusal.InputInvalid, `no action ${action.slice(0, 40)}`));
    const body: unknown = await c.req.json().catch(() => undefined);
    const out = await runAction(deps, s, c.req.param('workflowId'), action, body);
    return 'type' in out ? sendRefusal(c, out) : c.json(out);
  });
  app.route('/api', api);
  return app;
}

function refusalBody(r: { type: string; message: string }): Html {
  return str(
    html`<p class="refusal" data-testid="refusal"><code>${r.type}</code> ${r.message}</p>
      <p><a href="/">Back to the inbox</a></p>`,
  );
}
