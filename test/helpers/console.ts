/** A console on a test stack, and an HTTP client that signs in through it the way a browser does. */
import type { Stack } from '../../lab/stack';
import { DEFAULT_VIEWER_ROLES } from '../../console/config';
import { startConsole, type RunningConsole } from '../../console/server';
import { DEV_ISSUER_KEY_ENV, tokenForAct } from '../../src/identity/act-token';
import { staticIdentitySource } from '../../src/identity/config';
import { StaticPolicyStore } from '../../src/stores/policy-store';
import { builtinTools } from '../../src/tools/registry';

export function startTestConsole(
  stack: Stack,
  opts: { uiUrl?: string; refreshMs?: number } = {},
): Promise<RunningConsole> {
  return startConsole(
    {
      temporal: {
        client: stack.client,
        connection: stack.connection,
        namespace: stack.server.namespace,
        ...(stack.dataConverter ? { dataConverter: stack.dataConverter } : {}),
        ...(opts.uiUrl ? { uiUrl: opts.uiUrl } : {}),
      },
      issuers: staticIdentitySource([stack.identity.config]),
      policies: new StaticPolicyStore(),
      tools: builtinTools,
      viewerRoles: DEFAULT_VIEWER_ROLES,
      refreshMs: opts.refreshMs ?? 500,
      // People sign in with session tokens; each act is sent with a token for it, minted by the stack's issuer.
      actTokens: (session, scope) =>
        tokenForAct(session, scope, { [DEV_ISSUER_KEY_ENV]: stack.identity.keyPath }).then((r) => r.token),
    },
    { host: '127.0.0.1', port: 0 },
  );
}

/** A signed-in HTTP client: the session cookie and the page's CSRF token, as the browser would hold them. */
export interface ConsoleClient {
  readonly cookie: string;
  readonly csrf: string;
  get(path: string): Promise<Response>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

export async function signIn(c: RunningConsole, token: string): Promise<ConsoleClient> {
  const link = c.signInLink(token);
  const res = await fetch(link, { redirect: 'manual' });
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  if (res.status !== 303 || !cookie.startsWith('ll_console=')) throw new Error(`sign-in failed: ${res.status}`);
  const page = await (await fetch(`${c.url}/`, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
  return {
    cookie,
    csrf,
    get: (path) => fetch(`${c.url}${path}`, { headers: { cookie }, redirect: 'manual' }),
    post: (path, body, headers = {}) =>
      fetch(`${c.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: c.url, 'x-csrf-token': csrf, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
  };
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, ms = 30_000, every = 200): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, every));
  }
}
