/** The quota store a worker process uses, from its environment (docs/operations.md, "Cross-run rate limits"). */
import { configValue } from '../config';
import { QuotaStore } from './quota-store';
import { PostgresQuotaBackend } from './quota-store-pg';
import { SqliteQuotaBackend } from './quota-store-sqlite';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * PostgreSQL with LEDGERLOOP_QUOTA_URL (every worker of a deployment must name the same database), else SQLite with
 * LEDGERLOOP_QUOTA_DB (the workers of one host share the file), else none: cross-run limits then fail closed
 * (`Quota.Unavailable`). Nothing is connected or opened until the first reservation.
 */
export function quotaStoreFromEnv(env: Env = process.env): QuotaStore | undefined {
  const url = configValue('LEDGERLOOP_QUOTA_URL', env);
  if (url !== undefined) return new QuotaStore(new PostgresQuotaBackend(url));
  const file = configValue('LEDGERLOOP_QUOTA_DB', env);
  if (file !== undefined) return new QuotaStore(new SqliteQuotaBackend(file));
  return undefined;
}
