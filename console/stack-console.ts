/**
 * The console beside a stack that stays up (`npm start`, `npm run cluster`): the stack's client, the issuer file its
 * workers trust, the policy they read, and one-click dev sign-in links for carol (approver) and bob (operator):
 * each carries a one-time code the console exchanges server-side for a token of the stack's development issuer.
 */
import { DEV_ISSUER_KEY_ENV, tokenForAct } from '../src/identity/act-token';
import type { StackBase, StackServer } from '../lab/stack';
import { identitySourceFromEnv, IDENTITY_ISSUERS_ENV } from '../src/identity/config';
import { policyStoreFromEnv } from '../src/stores/policy-store';
import { builtinTools } from '../src/tools/registry';
import { DEFAULT_REFRESH_MS, DEFAULT_VIEWER_ROLES } from './config';
import { startConsole, type RunningConsole } from './server';

export interface StackConsole {
  /** Undefined when it could not start (e.g. its port is taken): the stack runs on without it, and `lines` say why. */
  readonly console?: RunningConsole;
  /** What to print: where the console is and the sign-in links. */
  readonly lines: readonly string[];
}

const DEV_PEOPLE = [
  ['carol', 'manager:carol', ['approver']],
  ['bob', 'ops:bob', ['operator']],
] as const;

export async function startStackConsole(
  stack: Pick<StackBase<StackServer>, 'client' | 'connection' | 'server' | 'dataConverter' | 'identity'>,
  opts: { readonly port: number; readonly uiUrl?: string; readonly tenant?: string },
): Promise<StackConsole> {
  let running: RunningConsole;
  try {
    running = await startConsole(
      {
        temporal: {
          client: stack.client,
          connection: stack.connection,
          namespace: stack.server.namespace,
          ...(stack.dataConverter ? { dataConverter: stack.dataConverter } : {}),
          ...(opts.uiUrl ? { uiUrl: opts.uiUrl } : {}),
        },
        issuers: identitySourceFromEnv({ [IDENTITY_ISSUERS_ENV]: stack.identity.configPath }),
        policies: policyStoreFromEnv(),
        tools: builtinTools,
        viewerRoles: DEFAULT_VIEWER_ROLES,
        refreshMs: DEFAULT_REFRESH_MS,
        // The stack's development issuer mints each act's token from the person's session token.
        actTokens: (session, scope) =>
          tokenForAct(session, scope, { [DEV_ISSUER_KEY_ENV]: stack.identity.keyPath }).then((r) => r.token),
      },
      { host: '127.0.0.1', port: opts.port },
    );
  } catch (err) {
    return { lines: [`The operator console did not start on port ${opts.port}: ${(err as Error).message}`] };
  }
  const lines = [`Operator console at ${running.url}; one-click dev sign-in (each link works once):`];
  for (const [name, principal, roles] of DEV_PEOPLE) {
    const token = await stack.identity.issue(principal, opts.tenant ?? 'acme', roles, { ttlSec: 12 * 3600 });
    lines.push(`  ${name} (${roles.join(', ')}): ${running.signInLink(token)}`);
  }
  return { console: running, lines };
}
