/**
 * The caller's identity token for a Temporal frontend that authorizes (the cluster's and compose's server,
 * lab/cluster/server/): a file holding one compact JWS, re-read whenever it changes, because tokens expire and
 * whoever issues them (the cluster supervisor, a sidecar of your identity provider) rewrites the file before they
 * do. Read by host/server/connection-config.ts only; the token never appears in a message or a log line.
 */
import fs from 'node:fs';
import { isTokenShaped } from '../../src/domain/verified-identity';

/** How often a worker's connection looks at its token file for a new token. */
export const TOKEN_FILE_CHECK_MS = 5_000;

export class FrontendTokenError extends Error {
  override readonly name = 'FrontendTokenError';
}

/** A token file: `current()` is the newest token it held (a rewrite in progress keeps the last good one). */
export interface TokenFileSource {
  readonly path: string;
  current(): string;
  /** Whether the file changed since the last `current()`; reads it again when it did. */
  refresh(): boolean;
}

function readToken(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new FrontendTokenError(
      `the Temporal token file ${file} is unreadable (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const token = text.trim();
  if (!isTokenShaped(token)) throw new FrontendTokenError(`the Temporal token file ${file} holds no token (a JWS)`);
  return token;
}

/** Reads `file` now (throws FrontendTokenError when it holds no token) and again whenever it changes. */
export function tokenFileSource(file: string, minCheckMs = 1_000): TokenFileSource {
  let token = readToken(file);
  let stamp = stampOf(file);
  let checkedAt = Date.now();
  const refresh = (): boolean => {
    checkedAt = Date.now();
    const now = stampOf(file);
    if (now === stamp) return false;
    try {
      token = readToken(file);
      stamp = now;
      return true;
    } catch {
      return false; // being rewritten, or gone: keep the last token; the frontend refuses it once it expires
    }
  };
  return {
    path: file,
    refresh,
    current() {
      if (Date.now() - checkedAt >= minCheckMs) refresh();
      return token;
    },
  };
}

function stampOf(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

/**
 * Calls `apply` with the file's new token whenever it changes, every `everyMs`; stops itself when `apply` throws
 * (the connection was closed). The timer never keeps a process alive.
 */
export function watchTokenFile(
  source: TokenFileSource,
  apply: (token: string) => Promise<void>,
  everyMs = TOKEN_FILE_CHECK_MS,
): { stop(): void } {
  const timer = setInterval(() => {
    if (!source.refresh()) return;
    apply(source.current()).catch(() => clearInterval(timer));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
