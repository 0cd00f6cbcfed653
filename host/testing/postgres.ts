/**
 * A PostgreSQL for a project's own tests: the one `DATABASE_URL` names, else a private server started from the
 * machine's PostgreSQL binaries (`initdb` and `pg_ctl` on PATH or in /usr/lib/postgresql/<version>/bin; as root
 * they run as the `postgres` user) in a folder of the caller's, on a free loopback port. Nothing is downloaded:
 * with neither, `startTestPostgres` throws `PostgresUnavailableError` naming both ways out, so a test that needs
 * PostgreSQL fails with a reason instead of skipping.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PostgresServerError, postgresLayout, startPostgres, stopPostgres, transcriptUrl } from '../server/postgres';
import { getFreePort } from '../server/dev-server';
import { parsePostgresUrl } from '../../src/stores/postgres-url';

/** No PostgreSQL to test on: `DATABASE_URL` is unset and no server could be started from the local binaries. */
export class PostgresUnavailableError extends Error {
  override readonly name = 'PostgresUnavailableError';
}

export interface TestPostgres {
  /** A `postgres://` URL (it may hold a password: keep it out of logs). */
  readonly url: string;
  /** `DATABASE_URL`: a server someone else runs; `private`: one started here, stopped by `stop()`. */
  readonly source: 'DATABASE_URL' | 'private';
  /** Stops a private server and removes its folder; nothing for a `DATABASE_URL` one. */
  stop(): Promise<void>;
}

export interface TestPostgresOptions {
  /** The folder a private server's data directory goes in (it is created, and removed by `stop`). */
  readonly dir: string;
  /** Default `process.env`: `DATABASE_URL` there wins over a private server. */
  readonly env?: NodeJS.ProcessEnv;
}

/** `DATABASE_URL` when set, else a private server from the local binaries; see the module comment. */
export async function startTestPostgres(opts: TestPostgresOptions): Promise<TestPostgres> {
  const given = (opts.env ?? process.env)['DATABASE_URL'];
  if (given !== undefined && given !== '') {
    const url = parsePostgresUrl(given, 'DATABASE_URL', (m) => new PostgresUnavailableError(m));
    return { url, source: 'DATABASE_URL', stop: async () => undefined };
  }
  const dir = path.resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755); // as root, the postgres user must pass through it to its own (0700) data directory
  const layout = postgresLayout(dir, await getFreePort());
  try {
    await startPostgres(layout);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const reason = err instanceof PostgresServerError ? err.message : String(err);
    throw new PostgresUnavailableError(
      `no PostgreSQL to test on: DATABASE_URL is not set, and a private server could not be started (${reason}). ` +
        'Set DATABASE_URL=postgres://user:password@host:5432/db, or install the PostgreSQL server binaries ' +
        '(initdb, pg_ctl; Debian: apt-get install postgresql).',
    );
  }
  return {
    url: transcriptUrl(layout),
    source: 'private',
    async stop() {
      await stopPostgres(layout);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
