/**
 * Starting a console: the Hono app on Node's HTTP server (@hono/node-server), bound to one address. Returns its
 * URL, a way to mint one-time sign-in links (for the demo's dev issuer), and `close`, which ends the live streams
 * and stops listening.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { allowedOf, type ConsoleDeps, type ListenOptions } from './config';
import { consoleApp } from './routes';
import { Sessions, SignInCodes } from './session';

export interface RunningConsole {
  readonly url: string;
  readonly port: number;
  readonly sessions: Sessions;
  readonly deps: ConsoleDeps;
  /** A one-click sign-in link carrying a one-time code for `token` (the token itself stays here). */
  signInLink(token: string): string;
  close(): Promise<void>;
}

export async function startConsole(deps: ConsoleDeps, listen: ListenOptions): Promise<RunningConsole> {
  const sessions = new Sessions();
  const codes = new SignInCodes();
  // The app needs the port (its allowed origins), known once the server listens.
  const holder: { app?: ReturnType<typeof consoleApp> } = {};
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve(
      { fetch: (req, env) => holder.app!.fetch(req, env), port: listen.port, hostname: listen.host },
      () => resolve(s as Server),
    );
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const allowed = allowedOf(port, listen.origins);
  const base = [...allowed.origins][0]!;
  const live = { closing: false, loops: new Set<Promise<void>>() };
  holder.app = consoleApp({ deps, sessions, codes, allowed, secureCookies: base.startsWith('https:'), live });
  return {
    url: base,
    port,
    sessions,
    deps,
    signInLink: (token) => `${base}/sign-in/dev?code=${codes.issue(token)}`,
    async close() {
      live.closing = true;
      await Promise.all([...live.loops]);
      await new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      });
    },
  };
}
