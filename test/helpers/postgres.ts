/**
 * A private PostgreSQL for one test file (lab/cluster/postgres.ts: initdb and pg_ctl as the postgres user, on a
 * free loopback port, in a temporary folder that the file may use for its own files too).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getFreePort } from '../../host/server/dev-server';
import { postgresLayout, startPostgres, stopPostgres, transcriptUrl } from '../../lab/cluster/postgres';

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
  chmodSync(dir, 0o755); // the postgres user must pass through it to its own (0700) data directory
  const layout = postgresLayout(dir, await getFreePort());
  try {
    await startPostgres(layout);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    url: transcriptUrl(layout),
    async stop() {
      await stopPostgres(layout);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
