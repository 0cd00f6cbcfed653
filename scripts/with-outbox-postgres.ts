/**
 * Runs a command against a private PostgreSQL holding the fenced outbox's table: `node -r tsx/cjs
 * scripts/with-outbox-postgres.ts <ENV_NAME> -- <command> [args...]` starts a server on a free loopback port in a
 * temporary folder (lab/cluster/postgres.ts, as test/helpers/postgres.ts does), creates `ledgerloop_outbox` in its
 * `ledgerloop` database, runs the command with the database's URL in `ENV_NAME` (the variable the project config's
 * `outbox.urlEnv` names; the URL holds a password, so it goes into the environment only, never a command line or
 * this script's output), then prints what the outbox holds (rows by status, sends), stops the server, removes
 * the folder and exits with the command's code; a command that passed without writing one row exits 1 (its
 * sends never went through the outbox). .ci/run runs protocols/transports/outbox.json under it.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { getFreePort } from '../host/server/dev-server';
import { postgresLayout, startPostgres, stopPostgres, transcriptUrl } from '../host/server/postgres';
import { PgOutbox } from '../src/downstream/outbox/pg-outbox';

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    child.on('error', (err) => {
      process.stderr.write(`with-outbox-postgres: ${command}: ${err.message}\n`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1)));
  });
}

/** What the command left in the table: its rows by status and the sends they began, as one line. */
async function summary(pool: Pool, table: string): Promise<{ readonly rows: number; readonly line: string }> {
  const found = await pool.query<{ status: string; rows: string; sends: string }>(
    `SELECT status, count(*) AS rows, sum(sends) AS sends FROM ${table} GROUP BY status ORDER BY status`,
  );
  const parts = found.rows.map((r) => `${r.status} ${r.rows} (${r.sends} sends)`);
  const rows = found.rows.reduce((n, r) => n + Number(r.rows), 0);
  return { rows, line: `outbox ${table}: ${parts.length === 0 ? 'no rows' : parts.join(', ')}` };
}

async function main(argv: readonly string[]): Promise<number> {
  const [envName, dashes, command, ...args] = argv;
  if (envName === undefined || !ENV_NAME.test(envName) || dashes !== '--' || command === undefined) {
    process.stderr.write('usage: scripts/with-outbox-postgres.ts <ENV_NAME> -- <command> [args...]\n');
    return 2;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-outbox-pg-'));
  chmodSync(dir, 0o755); // the postgres user must pass through it to its own (0700) data directory
  const layout = postgresLayout(dir, await getFreePort());
  try {
    await startPostgres(layout);
    const url = transcriptUrl(layout);
    const pool = new Pool({ connectionString: url });
    try {
      const outbox = new PgOutbox({ pool });
      await outbox.createTable();
      const code = await run(command, args, { ...process.env, [envName]: url });
      const left = await summary(pool, outbox.table);
      process.stdout.write(`with-outbox-postgres: ${left.line}\n`);
      // A command that passed without writing one row never sent through the outbox: it proves nothing about it.
      if (code === 0 && left.rows === 0) {
        process.stderr.write('with-outbox-postgres: the command wrote no outbox row: the outbox was not in its path\n');
        return 1;
      }
      return code;
    } finally {
      await pool.end();
    }
  } finally {
    await stopPostgres(layout).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`with-outbox-postgres: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
