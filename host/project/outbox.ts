/**
 * The fenced local outbox a project config declares (`outbox: { tools, urlEnv, table? }`), made into the worker's
 * outbox wiring at start: the database URL is read from the worker's environment (a secret, never in the config),
 * and a variable unset there, or one that is not a PostgreSQL URL, refuses the start with a `ProjectConfigError`
 * naming the variable (never its value). The table itself is verified before the worker polls (`PgOutbox.verify`);
 * a tool the worker does not serve, or one that takes a fence, is refused with the other wiring checks
 * (src/downstream/transports.ts).
 */
import type { OutboxWiring } from '../../src/downstream/transports';
import { parsePostgresUrl } from '../../src/stores/postgres-url';
import { ProjectConfigError, type ProjectConfig } from './config';

/** The outbox wiring `config` declares, or undefined without one. Loads `pg` only for a config that has one. */
export function projectOutbox(config: ProjectConfig, env: NodeJS.ProcessEnv = process.env): OutboxWiring | undefined {
  const declared = config.outbox;
  if (declared === undefined) return undefined;
  const url = env[declared.urlEnv];
  const refusal = (message: string) => new ProjectConfigError(config.file, [{ field: 'outbox.urlEnv', message }]);
  if (url === undefined || url.trim() === '')
    throw refusal(`the worker's environment has no ${declared.urlEnv} (the outbox database's URL)`);
  parsePostgresUrl(url, declared.urlEnv, refusal);
  /* eslint-disable @typescript-eslint/no-require-imports -- pg is loaded only for a worker with an outbox */
  const { Pool } = require('pg') as typeof import('pg');
  const { PgOutbox } =
    require('../../src/downstream/outbox/pg-outbox') as typeof import('../../src/downstream/outbox/pg-outbox');
  /* eslint-enable @typescript-eslint/no-require-imports */
  // An idle pool does not hold the process open: the worker's own shutdown ends it.
  const pool = new Pool({ connectionString: url, allowExitOnIdle: true });
  // A connection the server drops (a restart) is an error on the pool: the next query reconnects.
  pool.on('error', () => undefined);
  const outbox = new PgOutbox({ pool, ...(declared.table !== undefined ? { table: declared.table } : {}) });
  return { outbox, tools: declared.tools };
}
