/**
 * The quota store on PostgreSQL (`pg`): one database every worker host of a deployment reaches, and whose clock
 * (`clock_timestamp()`) is the one the windows run on. Each reservation is one transaction that first takes a
 * transaction-level advisory lock on the tenant, so two hosts reserving for one tenant are serialized and a window
 * admits exactly its `max`; other tenants do not wait. The table is migration 1 of component `quota`, applied on
 * first use (src/stores/postgres.ts). A database that cannot be reached within the timeouts refuses
 * (QuotaStoreUnavailable).
 */
import { parsePostgresUrl, PostgresDatabase } from './postgres';
import { QUOTA_URL_ENV, QuotaStoreConfigError, QuotaStoreUnavailable, type QuotaBackend } from './quota-store';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS ledgerloop_quota (
    tenant TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_ms BIGINT NOT NULL
  );
`;

/** Connect, and each statement (lock waits included), within 5 s: a reservation attempt has 5 s in all. */
const TIMEOUT_MS = 5_000;

/** Checks the URL and refuses anything but postgres(ql)://; the message never repeats the password. */
export function parseQuotaUrl(url: string): string {
  return parsePostgresUrl(url, QUOTA_URL_ENV, (m) => new QuotaStoreConfigError(m));
}

export class PostgresQuotaBackend implements QuotaBackend {
  readonly kind = 'postgres';
  private readonly db: PostgresDatabase;

  constructor(url: string, opts: { readonly max?: number } = {}) {
    this.db = new PostgresDatabase({
      url,
      setting: QUOTA_URL_ENV,
      urlError: (m) => new QuotaStoreConfigError(m),
      component: 'quota',
      migrations: [{ version: 1, sql: SCHEMA }],
      connectTimeoutMs: TIMEOUT_MS,
      statementTimeoutMs: TIMEOUT_MS,
      ...(opts.max === undefined ? {} : { max: opts.max }),
    });
  }

  async withTenant<T>(
    tenant: string,
    step: (stored: string | undefined, nowMs: number) => { readonly result: T; readonly next?: string },
  ): Promise<T> {
    try {
      return await this.db.transaction(async (c) => {
        await c.query(`SELECT pg_advisory_xact_lock(hashtextextended('ledgerloop.quota:' || $1, 0))`, [tenant]);
        const row = await c.query<{ state: string }>('SELECT state FROM ledgerloop_quota WHERE tenant = $1', [tenant]);
        // Read after the lock: a reservation that waited sees the time it is decided at.
        const clock = await c.query<{ now_ms: string }>(
          'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms',
        );
        const now = Number(clock.rows[0]!.now_ms);
        const stored = row.rows[0];
        const { result, next } = step(stored?.state, now);
        if (next !== undefined) {
          await c.query(
            `INSERT INTO ledgerloop_quota (tenant, state, updated_ms) VALUES ($1, $2, $3)
             ON CONFLICT (tenant) DO UPDATE SET state = excluded.state, updated_ms = excluded.updated_ms`,
            [tenant, next, now],
          );
        }
        return result;
      });
    } catch (err) {
      if (err instanceof QuotaStoreUnavailable) throw err;
      throw new QuotaStoreUnavailable(`the quota database did not answer: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
