/**
 * The one PostgreSQL helper of the stores (transcripts, quota; a service's tables later): a pool with bounded
 * timeouts, the store's schema as numbered migrations applied once each, and a transaction runner.
 *
 *   const db = new PostgresDatabase({ url, setting: 'LEDGERLOOP_QUOTA_URL', component: 'quota', migrations });
 *   await db.transaction(async (c) => { await c.query('SELECT ...'); });
 *
 * Migrations: every component's versions are recorded in `ledgerloop_schema_versions` (component, version). The
 * first `query` or `transaction` of a process applies the versions not recorded yet, in order, in one
 * transaction under one advisory lock that every component shares, so several workers starting together apply
 * each version exactly once and never race a `CREATE TABLE`. A failed migration is tried again on the next call.
 * Version 1 of a component that predates the table uses `CREATE TABLE IF NOT EXISTS`: on a database that already
 * holds the tables it only records itself.
 *
 * Transactions: a transaction PostgreSQL aborted for a serialization failure (40001) or a deadlock (40P01) is run
 * again, whole, up to `maxAttempts` times; so `work` must do nothing outside the database that it cannot repeat.
 */
import { Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';

import { parsePostgresUrl } from './postgres-url';

export { parsePostgresUrl, PostgresUrlError } from './postgres-url';

/** One step of a component's schema. Versions start at 1 and go up by one; a released version never changes. */
export interface Migration {
  readonly version: number;
  /** One or more statements, run in the migration's transaction. */
  readonly sql: string;
}

export interface PostgresOptions {
  /** A `postgres://` (or `postgresql://`) URL naming a database; checked by `parsePostgresUrl`. */
  readonly url: string;
  /** Where the URL came from (`LEDGERLOOP_QUOTA_URL`): the only name an error about the URL repeats. */
  readonly setting: string;
  /** The error an unusable URL raises (each store has its own config error). Default `PostgresUrlError`. */
  readonly urlError?: (message: string) => Error;
  /** The schema's name in `ledgerloop_schema_versions`, e.g. `quota`. */
  readonly component: string;
  readonly migrations: readonly Migration[];
  /** Pool size. Default 4: a worker's store calls are short, and a deployment's workers share one server. */
  readonly max?: number;
  /** How long a connection may take. Default 5 s: a store that cannot be reached refuses instead of hanging. */
  readonly connectTimeoutMs?: number;
  /** Each statement's limit, lock waits included. Default none (the server's setting). */
  readonly statementTimeoutMs?: number;
}

export interface TransactionOptions {
  /** Default the server's (read committed). `serializable` for work that reads, decides and writes without a lock. */
  readonly isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /** Runs of `work` in all when PostgreSQL aborts it for a serialization failure or deadlock. Default 3. */
  readonly maxAttempts?: number;
}

/** The version table every component records its migrations in. */
export const SCHEMA_VERSIONS_TABLE = 'ledgerloop_schema_versions';

const SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('ledgerloop.schema'))";
/** SQLSTATEs of a transaction the server aborted that succeeds when run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const DEFAULT_ATTEMPTS = 3;

/** Checks that `migrations` are numbered 1, 2, 3, ... in order (a gap or a repeat is a programming error). */
function checkMigrations(component: string, migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new RangeError(`${component}: migration ${i + 1} is numbered ${m.version}; number them 1, 2, 3, ...`);
  });
}

function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

export class PostgresDatabase {
  private readonly pool: Pool;
  private readonly component: string;
  private readonly migrations: readonly Migration[];
  private ready: Promise<void> | undefined;

  constructor(opts: PostgresOptions) {
    checkMigrations(opts.component, opts.migrations);
    this.component = opts.component;
    this.migrations = opts.migrations;
    this.pool = new Pool({
      connectionString: parsePostgresUrl(opts.url, opts.setting, opts.urlError),
      max: opts.max ?? 4,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 5_000,
      ...(opts.statementTimeoutMs === undefined ? {} : { statement_timeout: opts.statementTimeoutMs }),
    });
    // An idle client that loses its server must not crash the process: the next call gets a new one.
    this.pool.on('error', () => undefined);
  }

  /** Applies the migrations not applied yet (once per process; again after a failure). */
  migrate(): Promise<void> {
    this.ready ??= this.run(async (c) => {
      await c.query(SCHEMA_LOCK);
      await c.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA_VERSIONS_TABLE} (
        component TEXT NOT NULL,
        version INTEGER NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (component, version)
      )`);
      const applied = await c.query<{ version: number }>(
        `SELECT version FROM ${SCHEMA_VERSIONS_TABLE} WHERE component = $1`,
        [this.component],
      );
      const done = new Set(applied.rows.map((r) => r.version));
      for (const m of this.migrations) {
        if (done.has(m.version)) continue;
        await c.query(m.sql);
        await c.query(`INSERT INTO ${SCHEMA_VERSIONS_TABLE} (component, version) VALUES ($1, $2)`, [
          this.component,
          m.version,
        ]);
      }
    }, {}).catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** One statement outside a transaction, after the migrations. */
  async query<R extends QueryResultRow>(text: string, values?: readonly unknown[]): Promise<QueryResult<R>> {
    await this.migrate();
    return this.pool.query<R>(text, values as unknown[] | undefined);
  }

  /**
   * Runs `work` in one transaction on one connection, after the migrations: committed when it resolves, rolled
   * back when it throws. Run again, whole, when the server aborts it for a serialization failure or a deadlock.
   */
  async transaction<T>(work: (c: PoolClient) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    await this.migrate();
    return this.run(work, opts);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async run<T>(work: (c: PoolClient) => Promise<T>, opts: TransactionOptions): Promise<T> {
    const attempts = Math.max(1, opts.maxAttempts ?? DEFAULT_ATTEMPTS);
    const begin = opts.isolation === undefined ? 'BEGIN' : `BEGIN ISOLATION LEVEL ${opts.isolation.toUpperCase()}`;
    for (let attempt = 1; ; attempt++) {
      const c = await this.pool.connect();
      try {
        await c.query(begin);
        const out = await work(c);
        await c.query('COMMIT');
        return out;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        if (!isRetryable(err) || attempt >= attempts) throw err;
      } finally {
        c.release();
      }
    }
  }
}
