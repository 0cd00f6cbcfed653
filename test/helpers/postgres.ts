/**
 * A private PostgreSQL for one test file: `startTestPostgres` of ledgerloop/testing (initdb and pg_ctl as the
 * postgres user, on a free loopback port) in a temporary folder that the file may use for its own files too. It
 * never takes DATABASE_URL: each file gets a server of its own.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestPostgres as startPostgres } from '../../host/testing/postgres';

export interface TestPostgres {
  /** The temporary folder (the data directory is inside it). */
  readonly dir: string;
  /** A postgres:// URL of its `ledgerloop` database. */
  readonly url: string;
  /** Stops the server and removes the folder. */
  stop(): Promise<void>;
}

export async function startTestPostgres(name: string): Promise<TestPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `ledgerloop-${name}-`));
  const pg = await startPostgres({ dir, env: {} });
  return { dir, url: pg.url, stop: () => pg.stop() };
}
