/**
 * The check every PostgreSQL URL setting goes through (the stores, a project's outbox, a test's DATABASE_URL), in a
 * module of its own so that checking a URL never loads `pg`.
 */

/** A URL that is not a postgres:// URL naming a database. */
export class PostgresUrlError extends Error {
  override readonly name = 'PostgresUrlError';
}

/**
 * Returns `url` if it is a postgres(ql):// URL naming a database; otherwise throws `makeError` with a message that
 * names `setting` and never repeats the URL (it may hold a password).
 */
export function parsePostgresUrl(
  url: string,
  setting: string,
  makeError: (message: string) => Error = (m) => new PostgresUrlError(m),
): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw makeError(`${setting} is not a URL`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw makeError(`${setting} must be a postgres:// URL, not ${parsed.protocol}//…`);
  if (parsed.pathname.length <= 1) throw makeError(`${setting} names no database`);
  return url;
}
