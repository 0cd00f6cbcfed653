/** What a console is given: where Temporal is, who may sign in, the policy it reads, where it listens. */
import type { TokenScope } from '../src/identity/purpose';
import type { IdentitySource } from '../src/identity/config';
import type { PolicyStore } from '../src/stores/policy-store';
import type { ToolRegistry } from '../src/tools/registry';
import type { ConsoleTemporal } from './temporal';

/** `ledgerloop console`'s port unless told otherwise; the local cluster adds its port offset. */
export const DEFAULT_CONSOLE_PORT = 8090;
/** Roles that see every item of their tenant and are offered no action. */
export const DEFAULT_VIEWER_ROLES: readonly string[] = ['viewer'];
/** How often the live inbox asks visibility again (ms). */
export const DEFAULT_REFRESH_MS = 1_000;
/** How long a run's queried details are reused while its search attributes stay the same (ms). */
export const DETAIL_MAX_AGE_MS = 10_000;
/** At most this many unchanged runs whose details passed DETAIL_MAX_AGE_MS are asked again per refresh. */
export const REVALIDATE_PER_REFRESH = 64;
/** How many runs the inbox queries at once. */
export const QUERY_CONCURRENCY = 32;
/** At most this many closed runs are read for abandoned effects per refresh (the newest). */
export const ABANDONED_SCAN_LIMIT = 100;

export interface ConsoleDeps {
  readonly temporal: ConsoleTemporal;
  /** The same issuers the workers trust (LEDGERLOOP_IDENTITY_ISSUERS). */
  readonly issuers: IdentitySource;
  /** The same policy the workers hold (LEDGERLOOP_POLICY_FILE, or the built-in default). */
  readonly policies: PolicyStore;
  /** The tool declarations (summaries and amounts of calls read from histories). */
  readonly tools: ToolRegistry;
  readonly viewerRoles: readonly string[];
  readonly refreshMs: number;
  /**
   * The token for one act of a signed-in person (approve, resolve, cancel: src/identity/purpose.ts), from their
   * session token. Default `tokenForAct` with this process's environment: with LEDGERLOOP_DEV_ISSUER_KEY it mints
   * one with the development issuer's key, else it refuses (a production console needs its issuer's token exchange).
   */
  readonly actTokens?: (sessionToken: string, scope: TokenScope) => Promise<string>;
}

export interface ListenOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /**
   * The origins browsers reach the console by (scheme://host:port); every state-changing request must come from
   * one. Default: http://127.0.0.1:<port> and http://localhost:<port>.
   */
  readonly origins?: readonly string[];
}

/** The origins and Host header values a console on `host:port` accepts. */
export function allowedOf(
  port: number,
  origins?: readonly string[],
): { origins: ReadonlySet<string>; hosts: ReadonlySet<string> } {
  const list = origins?.length ? origins : [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
  const normalized = list.map((o) => new URL(o).origin.toLowerCase());
  return { origins: new Set(normalized), hosts: new Set(normalized.map((o) => new URL(o).host)) };
}
